import assert from 'node:assert/strict'
import fs from 'node:fs'
import { describe, it } from 'node:test'
import { ByteCapture, runBounded, startBounded, type BoundedSpawnOptions } from './bounded-spawn.ts'

/** True while `pid` is a live process (a zombie counts as gone). */
function alive(pid: number): boolean {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2)[0] !== 'Z'
  } catch {
    return false
  }
}

async function until(check: () => boolean, ms = 3000): Promise<boolean> {
  const deadline = Date.now() + ms
  while (Date.now() < deadline) {
    if (check()) return true
    await new Promise((resolve) => setTimeout(resolve, 20))
  }
  return check()
}

/**
 * Starts a shell that starts a grandchild (`sleep`) and prints its pid; resolves with that pid
 * and the child.
 */
async function withGrandchild(options: BoundedSpawnOptions) {
  let printed = ''
  let found: (pid: number) => void = () => undefined
  const grandchild = new Promise<number>((resolve) => (found = resolve))
  const child = startBounded('sh', ['-c', 'sleep 100 & echo $!; wait'], {
    ...options,
    onOutput: (stream, chunk) => {
      printed += chunk.toString()
      if (stream === 'stdout' && printed.includes('\n')) found(Number(printed.trim()))
    },
  })
  return { child, grandchild: await grandchild }
}

describe('bounded spawn', () => {
  it('kills the whole group, grandchild too, when the signal aborts', async () => {
    const controller = new AbortController()
    const { child, grandchild } = await withGrandchild({ signal: controller.signal })
    assert.equal(alive(grandchild), true)
    controller.abort()
    const exit = await child.exited
    assert.equal(exit.cancelled, true)
    assert.equal(exit.signal, 'SIGKILL')
    assert.equal(await until(() => !alive(grandchild)), true, 'the grandchild died with the group')
  })

  it('positive control: killing the child alone leaves the grandchild running', async () => {
    const controller = new AbortController()
    const { child, grandchild } = await withGrandchild({
      signal: controller.signal,
      kill: (pid) => process.kill(pid, 'SIGKILL'),
      // The grandchild holds stdout open: do not wait for it.
      killOnExit: false,
    })
    controller.abort()
    // `close` waits for the grandchild's hold on the pipes, so wait for the child alone.
    await new Promise((resolve) => child.child.once('exit', resolve))
    try {
      assert.equal(alive(grandchild), true, 'without the group kill the grandchild survives')
    } finally {
      process.kill(grandchild, 'SIGKILL')
    }
    await child.exited
  })

  it('kills the group at the deadline and says it timed out', async () => {
    const started = performance.now()
    const { child, grandchild } = await withGrandchild({ timeoutMs: 300 })
    const exit = await child.exited
    assert.equal(exit.timedOut, true)
    assert.equal(exit.cancelled, false)
    assert.equal(exit.exitCode, null)
    assert.ok(performance.now() - started < 5000)
    assert.equal(await until(() => !alive(grandchild)), true)
  })

  it('interrupts first at the deadline when asked, then kills after the grace', async () => {
    const run = runBounded(
      'sh',
      ['-c', 'trap "echo interrupted; exit 3" INT; sleep 5 >/dev/null 2>&1 & wait'],
      {
        timeoutMs: 300,
        interrupt: (child) => {
          process.kill(-(child.pid ?? 0), 'SIGINT')
          return true
        },
      },
    )
    const exit = await run
    assert.equal(exit.timedOut, true)
    assert.equal(exit.exitCode, 3)
    assert.match(exit.stdout, /interrupted/)
  })

  it('keeps the head and the tail of a flood and says it truncated', async () => {
    const run = await runBounded(
      'sh',
      ['-c', 'echo first; seq 1 200000; echo last; echo oops >&2; exit 7'],
      { maxOutputChars: 1000 },
    )
    assert.equal(run.exitCode, 7)
    assert.equal(run.truncated, true)
    assert.ok(run.stdout.startsWith('first\n'))
    assert.ok(run.stdout.trimEnd().endsWith('last'))
    assert.ok(run.stdout.length < 1500, `kept ${run.stdout.length} characters`)
    assert.equal(run.stderr, 'oops\n')
  })

  it('answers exit codes, signals and stdin', async () => {
    const run = await runBounded('sh', ['-c', 'read line; echo "got $line"; exit 4'], {
      stdin: 'hello\n',
    })
    assert.deepEqual(
      [run.exitCode, run.signal, run.stdout, run.truncated],
      [4, null, 'got hello\n', false],
    )
    const killed = await runBounded('sh', ['-c', 'kill -TERM $$'])
    assert.deepEqual([killed.exitCode, killed.signal], [null, 'SIGTERM'])
  })

  it('answers a program that is not there as a spawn error, not a throw', async () => {
    const run = await runBounded('/nonexistent/program', [])
    assert.equal(run.spawnErrorCode, 'ENOENT')
    assert.match(run.spawnError ?? '', /ENOENT/)
    assert.equal(run.exitCode, null)
  })

  it('stops a program whose byte capture overflowed', async () => {
    const capture = new ByteCapture(10_000)
    const child = startBounded('sh', ['-c', 'yes'], { stdout: capture, timeoutMs: 10_000 })
    const exit = await child.exited
    assert.equal(exit.overflowed, true)
    assert.equal(exit.timedOut, false)
    assert.ok(capture.bytes().byteLength <= 10_000)
  })

  it('with killOnExit, ends what the program left behind and does not wait for it', async () => {
    const started = performance.now()
    const { child, grandchild } = await withGrandchild({ killOnExit: true, closeGraceMs: 500 })
    // The shell exits at once when told to; its sleep holds stdout.
    process.kill(child.pid ?? 0, 'SIGTERM')
    await child.exited
    assert.ok(performance.now() - started < 5000)
    assert.equal(await until(() => !alive(grandchild)), true)
  })

  it('an already aborted signal kills at once', async () => {
    const run = await runBounded('sleep', ['10'], { signal: AbortSignal.abort() })
    assert.equal(run.cancelled, true)
    assert.equal(run.signal, 'SIGKILL')
  })
})
