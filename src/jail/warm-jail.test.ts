import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { assertJailAvailable, jailFixture } from './test-jail.ts'

const bash = (script: string) => ['/bin/bash', '-c', script]

/**
 * Takes the warm jail supervisor's stdout (its reply channel) with pidfd_getfd, as any command
 * of the same user can, and writes what argv[2] says to it.
 */
const TAKE_REPLY_CHANNEL = `
import ctypes, fcntl, os, sys
libc = ctypes.CDLL(None, use_errno=True)
fd = libc.syscall(438, os.pidfd_open(int(sys.argv[1])), 1, 0)
if fd < 0:
    print('pidfd_getfd refused, errno', ctypes.get_errno(), flush=True)
    sys.exit(1)
# The descriptor is shared with the supervisor's Node, which made it non-blocking.
fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) & ~os.O_NONBLOCK)
what = sys.argv[2]
if what == 'endless':
    chunk = b'x' * 65536
    for _ in range(1024):
        os.write(fd, chunk)
else:
    os.write(fd, what.encode() + b'\\n')
`

const toReplyChannel = (what: string) =>
  `python3 -c ${quote(TAKE_REPLY_CHANNEL)} "$(pgrep -f '^/opt/eitri/node' | head -1)" ${quote(what)}; sleep 5; echo not-reached`

function quote(text: string): string {
  return `'${text.replaceAll("'", "'\\''")}'`
}

describe('the warm jail reply channel', () => {
  it('ends the jail and answers an error when a command writes garbage, a forged line or an endless line to it', async (t) => {
    const { jail } = await jailFixture(t)
    await assertJailAvailable(jail)
    const attacks = {
      'not JSON': toReplyChannel('garbage'),
      'out of protocol': toReplyChannel('{"id":1,"stdout":7}'),
      'a command not waiting': toReplyChannel(
        '{"id":99999,"exitCode":0,"signal":null,"timedOut":false,"cancelled":false,"durationMs":1,"stdout":"forged","stderr":"","stdoutDropped":0,"stderrDropped":0}',
      ),
      // 64 MiB without a newline: the host must stop reading long before.
      'an endless line': toReplyChannel('endless'),
    }
    for (const [name, script] of Object.entries(attacks)) {
      const started = performance.now()
      const before = process.memoryUsage().rss
      const result = await jail.run({
        command: bash(script),
        access: 'workspace-write',
        timeoutMs: 20_000,
      })
      assert.equal(result.exitCode, null, name)
      assert.doesNotMatch(result.stdout, /not-reached|forged|refused/, name)
      assert.match(
        result.stderr,
        /may have taken over the warm jail's reply channel, so the jail was ended/,
        name,
      )
      assert.ok(performance.now() - started < 4_000, `${name}: answered at once, not at a deadline`)
      assert.ok(
        process.memoryUsage().rss - before < 32 * 1024 * 1024,
        `${name}: the host did not buffer the line`,
      )
      // The control: the next command gets a fresh warm jail and runs normally.
      const next = await jail.run({ command: bash('echo fine'), access: 'workspace-write' })
      assert.equal(next.stdout, 'fine\n', name)
    }
  })

  it('runs commands sent at once one after another, each to its end', async (t) => {
    const { jail } = await jailFixture(t)
    await assertJailAvailable(jail)
    const runs = await Promise.all(
      Array.from({ length: 3 }, (_, i) =>
        jail.run({ command: bash(`sleep 0.2; echo run-${i}`), access: 'workspace-write' }),
      ),
    )
    assert.deepEqual(
      runs.map((run) => `${run.exitCode}:${run.stdout.trim()}`),
      ['0:run-0', '0:run-1', '0:run-2'],
    )
  })

  it('the control: a command that floods its own output is kept to its limit and answers normally', async (t) => {
    const { jail } = await jailFixture(t)
    await assertJailAvailable(jail)
    const result = await jail.run({
      command: bash('head -c 5000000 /dev/zero | tr "\\0" "\\1"; echo'),
      access: 'workspace-write',
      maxOutputChars: 100_000,
    })
    assert.equal(result.exitCode, 0, result.stderr)
    assert.equal(result.truncated, true)
    assert.ok(result.stdout.startsWith('\u0001'.repeat(50_000)))
    assert.ok(result.stdout.endsWith(`${'\u0001'.repeat(49_999)}\n`))
  })
})
