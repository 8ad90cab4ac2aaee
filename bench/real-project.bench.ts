/**
 * A real project's test suite through the jail, on main and in a fork: the project of
 * test/helpers/project-fixture.ts (a git repository, a `node_modules` of about 3,300 files,
 * WebAssembly, a `node --test` suite of 14 tests), its `npm test` run through the `shell` tool
 * of a workshop, beside a plain spawn of the same command in the same folder. The first run on
 * main (the jail starts) and in a fork (its layer is built), then rounds of later runs, each
 * round plain, main and fork in turn so that load from other work falls on all three alike,
 * then `true` through `shell` on each (what the tool and the jail add to any command). Wall
 * time and, from bash's `time`, the CPU time of the command and its children: the load of a
 * shared machine moves it far less, and it leaves out the tool's work around the command,
 * which `true` shows. Prints minimums and medians of the later runs and the fork/main ratio
 * (goal ≤ 1.2) of the minimums and, paired, of each round's two runs.
 *
 * `EITRI_BENCH_RUNS` sets the number of rounds (default 7).
 */
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import { openWorkshop } from '../src/index.ts'
import { makeProjectFixture } from '../test/helpers/project-fixture.ts'
import { micros, report } from './measure.ts'

const ROUNDS = Math.max(3, Number(process.env['EITRI_BENCH_RUNS'] ?? 7) || 7)
const COMMAND = 'npm test'
/**
 * The command as both run it: bash's `time` prints the CPU time of the command and its
 * children, which another engineer's load on the shared machine changes far less than the wall
 * time.
 */
const TIMED = `TIMEFORMAT='cpu %3U %3S'; { time ${COMMAND} 2>&1; } 2>&1`

/** The CPU seconds (user and system) a TIMED run printed. */
function cpuOf(output: string): number {
  const found = /^cpu (\d+\.\d+) (\d+\.\d+)$/m.exec(output)
  if (found === null) throw new Error(`no CPU time in the output:\n${output.slice(-500)}`)
  return Number(found[1]) + Number(found[2])
}

/** Throws unless a run's output says the whole suite passed. */
function passed(output: string, tests: number, where: string): void {
  if (!new RegExp(`^# pass ${tests}$`, 'm').test(output) || !/^# fail 0$/m.test(output))
    throw new Error(`${COMMAND} did not pass ${where}:\n${output.slice(-2000)}`)
}

/** The command with a plain spawn (bash, the jail's PATH, a HOME of its own). */
function plainRun(cwd: string, home: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn('/bin/bash', ['-c', TIMED], {
      cwd,
      env: { PATH: '/usr/local/bin:/usr/bin:/bin', HOME: home, LANG: 'C.UTF-8' },
      stdio: ['ignore', 'pipe', 'inherit'],
    })
    let output = ''
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()))
    child.once('error', reject)
    child.once('exit', (code) =>
      code === 0 ? resolve(output) : reject(new Error(`plain ${COMMAND} exited ${code}`)),
    )
  })
}

async function timed(run: () => Promise<unknown>): Promise<number> {
  const start = performance.now()
  await run()
  return (performance.now() - start) * 1000
}

/** A run's wall time (µs) and the CPU time (µs) its output reports. */
async function measured(run: () => Promise<string>): Promise<{ wall: number; cpu: number }> {
  const start = performance.now()
  const output = await run()
  return { wall: (performance.now() - start) * 1000, cpu: cpuOf(output) * 1e6 }
}

const min = (samples: readonly number[]) => Math.min(...samples)
function median(samples: readonly number[]): number {
  const sorted = [...samples].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)] as number
}

const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'eitri-bench-project-'))
try {
  const workspace = path.join(scratch, 'workspace')
  fs.mkdirSync(workspace)
  const fixture = makeProjectFixture(workspace)
  const home = path.join(scratch, 'home')
  fs.mkdirSync(home)
  process.stdout.write(
    `${COMMAND}: ${fixture.tests} tests, node_modules of ${fixture.packageFiles} files in ${fixture.packages} packages; ${ROUNDS} rounds (EITRI_BENCH_RUNS); load average ${os
      .loadavg()
      .map((load) => load.toFixed(1))
      .join(' ')}\n`,
  )
  await using workshop = await openWorkshop({
    workspace,
    stateDir: path.join(scratch, 'state'),
    configPath: path.join(scratch, 'no-config.json'),
  })
  const use = async (fork: string): Promise<void> => {
    const used = await workshop.call('workspace_use', { fork })
    if (used.type !== 'success') throw new Error(used.content)
  }
  const shell = async (fork: string, where: string): Promise<string> => {
    await use(fork)
    const ran = await workshop.call('shell', { command: TIMED })
    if (ran.type !== 'success' || !ran.content.endsWith('[exit 0]'))
      throw new Error(`${COMMAND} failed ${where}: ${ran.content.slice(-2000)}`)
    passed(ran.content, fixture.tests, where)
    return ran.content
  }
  /** `true` through `shell` on a line: what the tool and the jail add to any command. */
  const bare = async (fork: string): Promise<number> => {
    await use(fork)
    return timed(async () => {
      const ran = await workshop.call('shell', { command: 'true' })
      if (!ran.content.endsWith('[exit 0]')) throw new Error(`true failed: ${ran.content}`)
    })
  }
  const plain = async (): Promise<string> => {
    const output = await plainRun(workspace, home)
    passed(output, fixture.tests, 'plainly')
    return output
  }

  // Not measured: the machine's caches (node, npm, the fixture's files) warm for everyone.
  await plain()
  const mainFirst = await timed(() => shell('main', 'on main'))
  const forked = await workshop.call('workspace_fork', { name: 'bench' })
  if (forked.type !== 'success') throw new Error(forked.content)
  const forkFirst = await timed(() => shell('bench', 'in the fork'))
  const samples = { plain: [] as number[], main: [] as number[], fork: [] as number[] }
  const cpu = { plain: [] as number[], main: [] as number[], fork: [] as number[] }
  const trues = { main: [] as number[], fork: [] as number[] }
  const record = (into: 'plain' | 'main' | 'fork', run: { wall: number; cpu: number }) => {
    samples[into].push(run.wall)
    cpu[into].push(run.cpu)
  }
  for (let round = 0; round < ROUNDS; round++) {
    record('plain', await measured(plain))
    record('main', await measured(() => shell('main', 'on main')))
    record('fork', await measured(() => shell('bench', 'in the fork')))
    trues.main.push(await bare('main'))
    trues.fork.push(await bare('bench'))
  }
  const [plainMin, mainMin, forkMin] = [min(samples.plain), min(samples.main), min(samples.fork)]
  report(`${COMMAND}, main, later (min)`, mainMin, plainMin, 'a plain spawn (min)')
  report(`${COMMAND}, fork, later (min)`, forkMin, plainMin, 'a plain spawn (min)')
  report(`${COMMAND}, fork, later (min)`, forkMin, mainMin, 'main, later (min)')
  report(
    `${COMMAND}, fork, later (median)`,
    median(samples.fork),
    median(samples.main),
    'main, later (median)',
  )
  report(`${COMMAND}, main, first`, mainFirst, plainMin, 'a plain spawn (min)')
  report(`${COMMAND}, fork, first`, forkFirst, mainFirst, 'main, first')
  process.stdout.write(
    `  medians: plain ${micros(median(samples.plain))}, main ${micros(median(samples.main))}, fork ${micros(median(samples.fork))}\n`,
  )
  report(`${COMMAND}, main, CPU time (min)`, min(cpu.main), min(cpu.plain), 'a plain spawn (min)')
  report(`${COMMAND}, fork, CPU time (min)`, min(cpu.fork), min(cpu.main), 'main (min)')
  report(`${COMMAND}, fork, CPU time (median)`, median(cpu.fork), median(cpu.main), 'main (median)')
  report('`true` through shell, fork (min)', min(trues.fork), min(trues.main), 'on main (min)')
  // Each round's fork/main ratio: the two runs a few seconds apart, so under the same load.
  const paired = median(samples.fork.map((fork, round) => fork / (samples.main[round] as number)))
  process.stdout.write(
    `  fork/main within a round: median ${paired.toFixed(2)}×, rounds ${samples.fork.map((fork, round) => (fork / (samples.main[round] as number)).toFixed(2)).join(' ')}\n`,
  )
  const ratio = forkMin / mainMin
  process.stdout.write(
    `\ngoal: a fork's run at most 1.2× main's (later runs, min): ${ratio.toFixed(2)}×: ${ratio <= 1.2 ? 'met' : 'missed'}; the median ratio within a round: ${paired.toFixed(2)}×: ${paired <= 1.2 ? 'met' : 'missed'}\n`,
  )
} finally {
  fs.rmSync(scratch, { recursive: true, force: true })
}
