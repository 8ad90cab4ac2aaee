import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { jailIdentity } from '../bubblewrap/jail-identity.ts'
import { JailedProcess } from './jailed-process.ts'
import { assertJailAvailable, jailFixture } from './test-jail.ts'
import { WarmJail } from './warm-jail.ts'

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

/**
 * A supervisor taken over, standing in the real one's place in a real bubblewrap: it says it is
 * ready, reads the first command, and writes argv[1] to its reply channel (or an endless line).
 */
const HOSTILE_SUPERVISOR = `
import json, os, sys, time
print(json.dumps({'ready': True}), flush=True)
sys.stdin.readline()
what = sys.argv[1]
if what == 'endless':
    chunk = b'x' * 65536
    for _ in range(1024):
        os.write(1, chunk)
else:
    os.write(1, what.encode() + b'\\n')
time.sleep(30)
`

function hostileWarmJail(what: string): WarmJail {
  return new WarmJail(
    (onOutput) =>
      new JailedProcess({
        bwrap: 'bwrap',
        args: [
          ...['--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc'],
          ...['--unshare-all', '--die-with-parent', '--new-session'],
          ...['--', 'python3', '-c', HOSTILE_SUPERVISOR, what],
        ],
        identity: jailIdentity(),
        maxOutputChars: 64 * 1024,
        keepStdinOpen: true,
        onOutput,
      }),
  )
}

describe('the warm jail reply channel', () => {
  it("is out of a command's reach: pidfd_getfd of the supervisor's stdout is refused, and the command runs to its end", async (t) => {
    const { jail } = await jailFixture(t)
    await assertJailAvailable(jail)
    // The first command may run cold, beside the warm jail's start.
    await jail.run({ command: bash('true'), access: 'workspace-write' })
    const result = await jail.run({
      command: bash(`${toReplyChannel('garbage').replace('sleep 5', 'sleep 0.1')}`),
      access: 'workspace-write',
      timeoutMs: 20_000,
    })
    assert.match(result.stdout, /pidfd_getfd refused, errno 1\n/)
    assert.match(result.stdout, /not-reached/)
    assert.equal(result.exitCode, 0, result.stderr)
  })

  it('ends the jail and answers an error when its supervisor writes garbage, a forged line or an endless line to it', async (t) => {
    const { jail } = await jailFixture(t)
    await assertJailAvailable(jail)
    const attacks = {
      'not JSON': 'garbage',
      'out of protocol': '{"id":1,"stdout":7}',
      'a command not waiting':
        '{"id":99999,"exitCode":0,"signal":null,"timedOut":false,"cancelled":false,"durationMs":1,"stdout":"forged","stderr":"","stdoutDropped":0,"stderrDropped":0}',
      // 64 MiB without a newline: the host must stop reading long before.
      'an endless line': 'endless',
    }
    for (const [name, what] of Object.entries(attacks)) {
      const warm = hostileWarmJail(what)
      t.after(() => warm.close())
      await warm.ready
      const before = process.memoryUsage().rss
      const result = await warm.run({
        argv: bash('echo not-reached'),
        cwd: '/',
        environment: {},
        timeoutMs: 20_000,
        maxOutputChars: 1000,
      })
      assert.equal(result.exitCode, null, name)
      assert.doesNotMatch(result.stdout, /not-reached|forged/, name)
      assert.match(
        result.stderr,
        /may have taken over the warm jail's reply channel, so the jail was ended/,
        name,
      )
      assert.equal(warm.alive, false, name)
      assert.ok(
        process.memoryUsage().rss - before < 32 * 1024 * 1024,
        `${name}: the host did not buffer the line`,
      )
    }
    // The control: the next command gets a fresh warm jail and runs normally.
    const next = await jail.run({ command: bash('echo fine'), access: 'workspace-write' })
    assert.equal(next.stdout, 'fine\n')
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
