/**
 * The cost of confinement per command: `true` spawned plainly, in our jail (warm: the normal
 * path of `shell`; cold: one bubblewrap per command, the path of background jobs), and under
 * Anthropic's sandbox-runtime (srt) wrapping the same command, measured in the same run.
 */
import { spawn } from 'node:child_process'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { SandboxManager } from '@anthropic-ai/sandbox-runtime'
import { createWorkspaceView, DirectoryTree } from '../src/index.ts'
import { Jail } from '../src/jail/jail.ts'
import { medianMicros, micros, report } from './measure.ts'

const ITERATIONS = 200

function exited(command: string, args: string[], cwd: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { cwd, stdio: 'ignore' })
    child.once('error', reject)
    child.once('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`${command} exited ${code}`)),
    )
  })
}

const scratch = await fs.mkdtemp(path.join(os.tmpdir(), 'eitri-bench-jail-'))
try {
  const workspace = path.join(scratch, 'workspace')
  await fs.mkdir(workspace)
  for (let index = 0; index < 50; index++)
    await fs.writeFile(path.join(workspace, `file-${index}.txt`), `content ${index}\n`)
  const tree = new DirectoryTree(workspace)
  await using jail = new Jail({ tree, view: createWorkspaceView({ tree }) })
  const availability = await jail.availability()
  if (!availability.available) throw new Error(`the jail is unavailable: ${availability.reason}`)

  const plain = await medianMicros(() => exited('/bin/true', [], workspace), ITERATIONS)
  const warm = await medianMicros(
    () => jail.run({ command: ['/bin/true'], access: 'workspace-write' }),
    ITERATIONS,
  )
  // A bind forces the cold path: one bubblewrap per command.
  const cold = await medianMicros(
    () =>
      jail.run({
        command: ['/bin/true'],
        access: 'workspace-write',
        binds: [{ source: '/usr', target: '/opt/usr', writable: false }],
      }),
    ITERATIONS / 2,
  )

  // As root, a bind nobody cannot reach (a checkout under a 0700 home) is mounted by the caller
  // in a private namespace first (caller-mounts.ts); the same bind from an open folder beside it.
  const closed = path.join(scratch, 'closed')
  await fs.mkdir(path.join(closed, 'pkg'), { recursive: true })
  await fs.chmod(closed, 0o700)
  await fs.chmod(scratch, 0o755)
  const open = path.join(scratch, 'open')
  await fs.mkdir(open, { mode: 0o755 })
  const coldWith = (source: string) => () =>
    jail.run({
      command: ['/bin/true'],
      access: 'workspace-write',
      binds: [{ source, target: '/opt/pkg', writable: false }],
    })
  const coldOpen = await medianMicros(coldWith(open), ITERATIONS / 2)
  const coldClosed = await medianMicros(coldWith(path.join(closed, 'pkg')), ITERATIONS / 2)
  report('cold, a bind from a 0700 folder', coldClosed, coldOpen, 'the same bind, open folder')
  process.stdout.write(
    `  a bind nobody cannot reach adds ${micros(coldClosed - coldOpen)} to a cold start${jail.identity.dropped ? ' (the caller mounts it first)' : ' (none for an unprivileged caller: its jail reaches what it does)'}\n`,
  )

  await SandboxManager.initialize({
    network: { allowedDomains: [], deniedDomains: [] },
    filesystem: { denyRead: [], allowWrite: [workspace], denyWrite: [] },
  })
  let srt: number
  try {
    srt = await medianMicros(
      async () =>
        exited('/bin/bash', ['-c', await SandboxManager.wrapWithSandbox('true')], workspace),
      ITERATIONS / 4,
    )
  } finally {
    await SandboxManager.reset()
  }

  report('true in our jail (warm, the shell path)', warm, plain, 'a plain spawn')
  report('true in our jail (warm, the shell path)', warm, srt, 'srt wrapping the same command')
  report('true in our jail (cold, one bwrap each)', cold, plain, 'a plain spawn')
  report('true in our jail (cold, one bwrap each)', cold, srt, 'srt wrapping the same command')
  process.stdout.write(
    `  caller uid ${process.getuid?.() ?? '?'} (${jail.identity.dropped ? 'root: jails run as nobody on a mirror' : 'jails run as the caller on the workspace'})\n` +
      `  added to a plain spawn: warm ${micros(warm - plain)}, cold ${micros(cold - plain)} (goal ≤ 10 ms); srt is ${(srt / warm).toFixed(1)}× the warm jail, ${(srt / cold).toFixed(1)}× the cold one (goal ≥ 5×)\n`,
  )
} finally {
  await fs.rm(scratch, { recursive: true, force: true })
}
