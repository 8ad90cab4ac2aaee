/**
 * What a jailed `true` costs as the workspace grows: 50, 10,000, 50,000 and 100,000 files of
 * a realistic project (a git repository with src/ and a node_modules of small files in nested
 * packages). For each size, in one run: `Jail.run` of a plain foreground command (the path
 * of `shell`): the first command of a new Jail (which runs cold while the Jail's warm jail
 * starts beside it) and the median of later ones in the warm jail (back to back, and on the
 * overlay also spaced 300 ms apart as an agent's commands come), with the overlay (layers
 * 'overlay') and the mirror (layers 'mirror') side by side; a background job (`Jail.start`,
 * the cold path: one bubblewrap and a fresh overlay of its own), back to back and, on the
 * overlay, spaced 300 ms apart (a jail started ahead is ready for each; against a plain spawn
 * spaced the same); a plain spawn of `true`;
 * a fork's first and later commands through the public workshop API (a fork's overlays: main's folder below the fork's layer);
 * Anthropic's sandbox-runtime (srt) running `true` in the same folder; and from 10,000 files
 * `eitri exec -- true` end to end, against a plain spawn of `true` taken turn about with it.
 *
 * `EITRI_BENCH_SIZES=50,2000 npm run bench -- jail-size` for a quick run; `EITRI_BENCH_RUNS`
 * sets how many later commands make a median (default 30).
 */
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import { fileURLToPath } from 'node:url'
import { SandboxManager } from '@anthropic-ai/sandbox-runtime'
import { createWorkspaceView, DirectoryTree, openWorkshop } from '../src/index.ts'
import { Jail } from '../src/jail/jail.ts'
import { micros, report } from './measure.ts'
import { makeProject } from './project-fixture.ts'

const SIZES = sizesFromEnvironment(process.env['EITRI_BENCH_SIZES'], [50, 10_000, 50_000, 100_000])
const LATER_RUNS = Math.max(3, Number(process.env['EITRI_BENCH_RUNS'] ?? 30) || 30)
/** `eitri exec` runs at every size from 10,000 files, or in a quick run at its largest. */
const CLI_SIZES = SIZES.some((size) => size >= 10_000)
  ? SIZES.filter((size) => size >= 10_000)
  : [Math.max(...SIZES)]
/** The goal for `eitri exec -- true` at 50,000 files and more, in microseconds. */
const EXEC_GOAL = 1_000_000
const REPOSITORY = fileURLToPath(new URL('..', import.meta.url))

function sizesFromEnvironment(value: string | undefined, fallback: number[]): number[] {
  if (value === undefined || value.trim() === '') return fallback
  const sizes = value.split(',').map((part) => Number(part.trim().replace(/_/g, '')))
  if (sizes.some((size) => !Number.isInteger(size) || size < 10))
    throw new Error(`EITRI_BENCH_SIZES must be whole numbers of at least 10, comma-separated`)
  return sizes
}

/** Resolves when the program exits 0; rejects with its status (and stderr) otherwise. */
function exited(
  command: string,
  args: readonly string[],
  options: { cwd: string; env?: NodeJS.ProcessEnv },
): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: options.env ?? process.env,
      stdio: ['ignore', 'ignore', 'pipe'],
    })
    let stderr = ''
    child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
    child.once('error', reject)
    child.once('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`${command} exited ${code}: ${stderr.trim()}`)),
    )
  })
}

async function timed(run: () => Promise<unknown>): Promise<number> {
  const start = performance.now()
  await run()
  return (performance.now() - start) * 1000
}

async function medianOf(run: () => Promise<unknown>, times: number): Promise<number> {
  const samples: number[] = []
  for (let index = 0; index < times; index++) samples.push(await timed(run))
  return median(samples)
}

function median(samples: readonly number[]): number {
  const sorted = [...samples].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)] as number
}

/** Makes the project and commits it; answers how many files git sees (not ignored). */
async function makeRepository(root: string, files: number): Promise<number> {
  const seen = makeProject(root, files)
  const git = (...args: string[]) =>
    exited(
      'git',
      ['-C', root, '-c', 'user.name=bench', '-c', 'user.email=bench@example.com', ...args],
      { cwd: root },
    )
  await git('init', '-q')
  await git('add', '-A')
  await git('commit', '-qm', 'fixture')
  await git('gc', '-q')
  return seen
}

/** Runs `true` in the jail on the warm path; throws unless it exited 0. */
async function jailedTrue(jail: Jail): Promise<void> {
  const result = await jail.run({ command: ['true'], access: 'workspace-write' })
  if (result.exitCode !== 0)
    throw new Error(`jailed true exited ${result.exitCode}: ${result.stderr}`)
}

interface Figures {
  first: number
  later: number
  /** Of the first command: the jail's availability probe. */
  probe?: number
  /** A background job running `true` (the cold path), back to back, median. */
  job?: number
  /** The same spaced {@link SPACED_MS} apart (a jail started ahead is ready), median. */
  jobReady?: number
  /** A plain spawn of `true` spaced the same, taken turn about with those jobs, median. */
  plainSpaced?: number
  /** A later command in the warm jail spaced {@link SPACED_MS} apart, median. */
  laterSpaced?: number
}

/** The pause before each spaced job: long enough for the jail started ahead to be ready. */
const SPACED_MS = 300

/** Background `true` (the cold path); throws unless it exited 0. */
async function backgroundTrue(jail: Jail): Promise<void> {
  const started = await jail.start({ command: ['true'], access: 'workspace-write' })
  const result = await started.finished
  if (result.exitCode !== 0) throw new Error(`background true exited ${result.exitCode}`)
}

/** Background jobs spaced apart, each followed (spaced too) by a plain spawn: both medians. */
async function spacedJobs(
  workspace: string,
  times: number,
  work: () => Promise<void>,
): Promise<{ job: number; plain: number }> {
  const jobs: number[] = []
  const plains: number[] = []
  const pause = (): Promise<void> => new Promise((resolve) => setTimeout(resolve, SPACED_MS))
  for (let index = 0; index < times; index++) {
    await pause()
    jobs.push(await timed(work))
    await pause()
    plains.push(await timed(() => exited('true', [], { cwd: workspace })))
  }
  return { job: median(jobs), plain: median(plains) }
}

/** The first command of a new Jail (median of `firsts` jails) and the median of later ones. */
async function measureJail(
  workspace: string,
  layers: 'overlay' | 'mirror',
  firsts: number,
  later: number,
): Promise<Figures> {
  const samples: number[] = []
  const probes: number[] = []
  let laterMedian = 0
  let job = 0
  let spaced: { job: number; plain: number } | undefined
  let laterSpaced: number | undefined
  for (let round = 0; round < firsts; round++) {
    const tree = new DirectoryTree(workspace)
    const jail = new Jail({ tree, view: createWorkspaceView({ tree }), layers })
    try {
      // The first command probes the jail first (one cold bubblewrap); timed apart as well.
      const probe = await timed(() => jail.availability())
      probes.push(probe)
      samples.push(probe + (await timed(() => jailedTrue(jail))))
      if (jail.layers.mode !== layers)
        throw new Error(`asked for layers '${layers}', got ${JSON.stringify(jail.layers)}`)
      if (round === firsts - 1) {
        // Later commands: the warm jail's, once it is ready (the first command started it).
        await jail.startWarmJail('workspace-write')
        laterMedian = await medianOf(() => jailedTrue(jail), later)
        job = await medianOf(() => backgroundTrue(jail), later)
        if (layers === 'overlay') {
          spaced = await spacedJobs(workspace, later, () => backgroundTrue(jail))
          // As an agent sends commands: each after a pause (the model's turn), not back to back.
          laterSpaced = (await spacedJobs(workspace, Math.min(later, 10), () => jailedTrue(jail)))
            .job
        }
      }
    } finally {
      await jail.close()
    }
  }
  return {
    first: median(samples),
    probe: median(probes),
    later: laterMedian,
    job,
    ...(spaced === undefined ? {} : { jobReady: spaced.job, plainSpaced: spaced.plain }),
    ...(laterSpaced === undefined ? {} : { laterSpaced }),
  }
}

/**
 * The first command of a new Jail on the cold path with no warm jail started beside it (a bind
 * makes it one bubblewrap of its own and never a warm jail's): what starting the warm jail
 * beside the first command costs it.
 */
async function measureColdFirst(workspace: string, rounds: number): Promise<number> {
  const samples: number[] = []
  for (let round = 0; round < rounds; round++) {
    const tree = new DirectoryTree(workspace)
    const jail = new Jail({ tree, view: createWorkspaceView({ tree }), layers: 'overlay' })
    try {
      samples.push(
        await timed(async () => {
          const result = await jail.run({
            command: ['true'],
            access: 'workspace-write',
            binds: [{ source: '/usr', target: '/opt/usr', writable: false }],
          })
          if (result.exitCode !== 0) throw new Error(`cold true exited ${result.exitCode}`)
        }),
      )
    } finally {
      await jail.close()
    }
  }
  return median(samples)
}

/** A fork's first and later commands, through the workshop a server opens (watching main). */
async function measureFork(
  scratch: string,
  workspace: string,
  size: number,
  later: number,
): Promise<Figures> {
  await using workshop = await openWorkshop({
    workspace,
    stateDir: path.join(scratch, `state-${size}`),
    configPath: path.join(scratch, 'no-config.json'),
    watch: true,
  })
  const fork = await workshop.lines.fork({ name: 'bench' })
  const jail = await workshop.jailOf(fork.id)
  const first = await timed(() => jailedTrue(jail))
  return { first, later: await medianOf(() => jailedTrue(jail), later) }
}

/**
 * Main's first and later commands through the workshop a server opens (watching main): the
 * watcher sets up while the first command runs.
 */
async function measureServerMain(
  scratch: string,
  workspace: string,
  size: number,
  later: number,
): Promise<Figures> {
  const start = performance.now()
  await using workshop = await openWorkshop({
    workspace,
    stateDir: path.join(scratch, `state-main-${size}`),
    configPath: path.join(scratch, 'no-config.json'),
    watch: true,
  })
  const jail = await workshop.jailOf('main')
  await jailedTrue(jail)
  const first = (performance.now() - start) * 1000
  return { first, later: await medianOf(() => jailedTrue(jail), later) }
}

/** Why srt cannot run here, or undefined when it can. */
async function srtUnavailable(): Promise<string | undefined> {
  if (!SandboxManager.isSupportedPlatform()) return 'srt does not support this platform'
  const check = SandboxManager.checkDependencies()
  if (check.errors.length > 0) return `srt's dependencies are missing: ${check.errors.join('; ')}`
  return undefined
}

/**
 * srt used as a library (as jail.bench.ts does): wrap `true`, run the wrapped command with
 * bash. srt looks for dangerous files under the process's own folder, so it runs from the
 * workspace.
 */
async function measureSrtLibrary(workspace: string, times: number): Promise<number> {
  const before = process.cwd()
  process.chdir(workspace)
  await SandboxManager.initialize({
    network: { allowedDomains: [], deniedDomains: [] },
    filesystem: { denyRead: [], allowWrite: [workspace], denyWrite: [] },
  })
  try {
    return await medianOf(
      async () =>
        exited('/bin/bash', ['-c', await SandboxManager.wrapWithSandbox('true')], {
          cwd: workspace,
        }),
      times,
    )
  } finally {
    await SandboxManager.reset()
    process.chdir(before)
  }
}

/** `srt true` at the command line, from the workspace, with a settings file like the above. */
async function measureSrtCommand(scratch: string, workspace: string, times: number) {
  const settings = path.join(scratch, `srt-settings-${path.basename(workspace)}.json`)
  fs.writeFileSync(
    settings,
    JSON.stringify({
      network: { allowedDomains: [], deniedDomains: [] },
      filesystem: { denyRead: [], allowWrite: [workspace], denyWrite: [] },
    }),
  )
  const srt = path.join(REPOSITORY, 'node_modules', '.bin', 'srt')
  const run = () => exited(process.execPath, [srt, '-s', settings, 'true'], { cwd: workspace })
  return { first: await timed(run), later: await medianOf(run, times) }
}

/** `eitri exec -- true` at the command line, from the workspace, with its own state folder. */
/**
 * `eitri exec -- true` from the workspace folder with its own state folder: the first run (the
 * initial snapshot), then `times` runs, each followed by a plain spawn of `true` and
 * `eitri --version` (Node's start and the command line alone), so all three meet the same load.
 * Answers the first, and the median and the least of the later runs of each.
 */
async function measureEitriExec(scratch: string, workspace: string, times: number) {
  const env = {
    ...process.env,
    EITRI_STATE_DIR: path.join(scratch, 'cli-state'),
    EITRI_CONFIG: path.join(scratch, 'no-config.json'),
  }
  const eitri = path.join(REPOSITORY, 'bin', 'eitri.js')
  const run = () => exited(process.execPath, [eitri, 'exec', '--', 'true'], { cwd: workspace, env })
  const first = await timed(run)
  const samples = { exec: [] as number[], plain: [] as number[], version: [] as number[] }
  for (let round = 0; round < times; round++) {
    samples.exec.push(await timed(run))
    samples.plain.push(await timed(() => exited('true', [], { cwd: workspace })))
    samples.version.push(
      await timed(() => exited(process.execPath, [eitri, '--version'], { cwd: workspace })),
    )
  }
  const least = (values: number[]) => Math.min(...values)
  return {
    first,
    later: median(samples.exec),
    least: least(samples.exec),
    plain: least(samples.plain),
    version: least(samples.version),
  }
}

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'eitri-bench-size-'))
try {
  const srtMissing = await srtUnavailable()
  const overlayLater = new Map<number, number>()
  const overlayFirst = new Map<number, number>()
  const srtLater = new Map<number, number>()
  /** The later command spaced apart, by size (its ratio to srt is reported beside). */
  const srtLaterSpaced = new Map<number, number>()
  const execLeast = new Map<number, number>()
  const overlayJob = new Map<number, number>()
  /** A job with a jail ready (spaced), and a plain spawn spaced the same. */
  const overlayJobReady = new Map<number, [number, number]>()
  const plainTrue = new Map<number, number>()
  process.stdout.write(
    `sizes ${SIZES.join(', ')} (EITRI_BENCH_SIZES), ${LATER_RUNS} later commands a median (EITRI_BENCH_RUNS); load average ${os
      .loadavg()
      .map((load) => load.toFixed(1))
      .join(' ')}; caller uid ${process.getuid?.() ?? '?'}\n`,
  )
  for (const size of SIZES) {
    const workspace = path.join(scratch, `project-${size}`)
    const building = performance.now()
    const seen = await makeRepository(workspace, size)
    process.stdout.write(
      `\n### ${size} files (${seen} not ignored, so in a fork; built in ${((performance.now() - building) / 1000).toFixed(1)} s)\n`,
    )
    // The mirror at tens of thousands of files takes seconds a command: fewer samples there.
    const heavy = size > 20_000
    const plain = await medianOf(() => exited('true', [], { cwd: workspace }), LATER_RUNS)
    const overlay = await measureJail(workspace, 'overlay', 3, LATER_RUNS)
    const mirror = await measureJail(
      workspace,
      'mirror',
      heavy ? 1 : 3,
      heavy ? Math.min(LATER_RUNS, 5) : LATER_RUNS,
    )
    overlayLater.set(size, overlay.later)
    overlayFirst.set(size, overlay.first)
    report(`${size}: later command, overlay`, overlay.later, plain, 'a plain spawn of true')
    report(`${size}: later command, mirror`, mirror.later, overlay.later, 'the overlay')
    report(
      `${size}: first command (new Jail), overlay`,
      overlay.first,
      plain,
      'a plain spawn of true',
    )
    report(`${size}: first command (new Jail), mirror`, mirror.first, overlay.first, 'the overlay')
    const cold = await measureColdFirst(workspace, 3)
    report(
      `${size}: first command, no warm jail beside`,
      cold,
      overlay.first,
      'with the warm start',
    )
    report(
      `${size}: background job (cold path), overlay`,
      overlay.job ?? 0,
      plain,
      'a plain spawn of true',
    )
    report(
      `${size}: background job, one ready (spaced ${SPACED_MS} ms), overlay`,
      overlay.jobReady ?? 0,
      overlay.plainSpaced ?? 0,
      'a plain spawn of true, spaced',
    )
    report(
      `${size}: later command, spaced ${SPACED_MS} ms, overlay`,
      overlay.laterSpaced ?? 0,
      overlay.plainSpaced ?? 0,
      'a plain spawn of true, spaced',
    )
    report(
      `${size}: background job (cold path), mirror`,
      mirror.job ?? 0,
      plain,
      'a plain spawn of true',
    )
    overlayJob.set(size, overlay.job ?? 0)
    overlayJobReady.set(size, [overlay.jobReady ?? 0, overlay.plainSpaced ?? 0])
    plainTrue.set(size, plain)
    process.stdout.write(
      `  of the first command, the availability probe: overlay ${micros(overlay.probe ?? 0)}, mirror ${micros(mirror.probe ?? 0)}\n`,
    )
    const server = await measureServerMain(
      scratch,
      workspace,
      size,
      heavy ? Math.min(LATER_RUNS, 10) : LATER_RUNS,
    )
    report(
      `${size}: main's first command in a server (open + watcher + first)`,
      server.first,
      overlay.first,
      'a new Jail’s first, overlay',
    )
    report(
      `${size}: main's later command in a server`,
      server.later,
      overlay.later,
      'a Jail’s, overlay',
    )
    const fork = await measureFork(
      scratch,
      workspace,
      size,
      heavy ? Math.min(LATER_RUNS, 10) : LATER_RUNS,
    )
    report(`${size}: a fork's first command`, fork.first, overlay.first, "main's, overlay")
    report(`${size}: a fork's later command`, fork.later, overlay.later, "main's, overlay")
    if (srtMissing === undefined) {
      const srt = await measureSrtLibrary(workspace, Math.min(LATER_RUNS, 10))
      srtLater.set(size, srt)
      report(`${size}: later command, overlay`, overlay.later, srt, 'srt (library, bash -c)')
      report(
        `${size}: later command, spaced ${SPACED_MS} ms, overlay`,
        overlay.laterSpaced ?? 0,
        srt,
        'srt (library, bash -c)',
      )
      srtLaterSpaced.set(size, overlay.laterSpaced ?? 0)
    }
    if (CLI_SIZES.includes(size)) {
      const runs = Math.max(5, Math.min(LATER_RUNS, 10))
      const exec = await measureEitriExec(scratch, workspace, runs)
      execLeast.set(size, exec.least)
      report(`${size}: eitri exec -- true, first`, exec.first, plain, 'a plain spawn of true')
      report(`${size}: eitri exec -- true, median`, exec.later, plain, 'a plain spawn of true')
      report(
        `${size}: eitri exec -- true, least of ${runs}`,
        exec.least,
        exec.plain,
        'plain spawn, least',
      )
      report(
        `${size}: eitri exec -- true, least of ${runs}`,
        exec.least,
        exec.version,
        'eitri --version, least',
      )
      if (srtMissing === undefined) {
        const srt = await measureSrtCommand(scratch, workspace, 5)
        report(
          `${size}: eitri exec -- true, later`,
          exec.later,
          srt.later,
          'srt true (command line)',
        )
        process.stdout.write(`  srt true at the command line: first ${micros(srt.first)}\n`)
      }
    }
    fs.rmSync(workspace, { recursive: true, force: true })
  }
  if (srtMissing !== undefined) process.stdout.write(`\nsrt was not measured: ${srtMissing}\n`)

  // The goals, judged on this run's figures.
  const base = overlayLater.get(Math.min(...SIZES))
  process.stdout.write('\ngoals (overlay):\n')
  for (const size of SIZES.filter((size) => size >= 50_000)) {
    const later = overlayLater.get(size) as number
    const first = overlayFirst.get(size) as number
    if (base !== undefined) {
      const bound = 1.5 * base + 3000
      process.stdout.write(
        `  later command at ${size}: ${micros(later)} ≤ 1.5 × ${micros(base)} + 3 ms = ${micros(bound)}: ${later <= bound ? 'met' : 'missed'}\n`,
      )
    }
    process.stdout.write(
      `  first command at ${size}: ${micros(first)} < 300 ms: ${first < 300_000 ? 'met' : 'missed'}\n`,
    )
  }
  for (const [size, least] of execLeast) {
    if (size < 50_000) continue
    process.stdout.write(
      `  eitri exec -- true at ${size}, least of its runs: ${micros(least)} < 1 s: ${least < EXEC_GOAL ? 'met' : 'missed'}\n`,
    )
  }
  for (const [size, job] of overlayJob) {
    const plain = plainTrue.get(size) as number
    process.stdout.write(
      `  background job (cold path), back to back, at ${size}: ${micros(job)} ≤ plain ${micros(plain)} + 10 ms: ${job <= plain + 10_000 ? 'met' : 'missed'} (+${micros(job - plain)})\n`,
    )
    const [ready, plainSpaced] = overlayJobReady.get(size) ?? [0, 0]
    process.stdout.write(
      `  background job, one ready (spaced ${SPACED_MS} ms), at ${size}: ${micros(ready)} ≤ plain ${micros(plainSpaced)} + 10 ms: ${ready <= plainSpaced + 10_000 ? 'met' : 'missed'} (${ready >= plainSpaced ? '+' : '-'}${micros(Math.abs(ready - plainSpaced))})\n`,
    )
  }
  for (const [size, srt] of srtLater) {
    const share = (overlayLater.get(size) as number) / srt
    process.stdout.write(
      `  eitri/srt at ${size}: ${share.toFixed(3)} ≤ 0.1: ${share <= 0.1 ? 'met' : 'missed'}\n`,
    )
    const spacedShare = (srtLaterSpaced.get(size) ?? 0) / srt
    process.stdout.write(
      `  eitri/srt at ${size}, commands spaced ${SPACED_MS} ms: ${spacedShare.toFixed(3)} ≤ 0.1: ${spacedShare <= 0.1 ? 'met' : 'missed'}\n`,
    )
  }
} finally {
  fs.rmSync(scratch, { recursive: true, force: true })
}
