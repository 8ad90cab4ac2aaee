import assert from 'node:assert/strict'
import fs from 'node:fs'
import { describe, it } from 'node:test'
import { setTimeout as sleep } from 'node:timers/promises'
import type { Jail } from './jail.ts'
import { assertJailAvailable, jailFixture } from './test-jail.ts'

const bash = (script: string) => ['/bin/bash', '-c', script]

/** Seconds since boot, as /proc counts a process's start. */
function uptimeSeconds(): number {
  return Number(fs.readFileSync('/proc/uptime', 'utf8').split(' ')[0])
}

/** Runs `script` in the warm jail after it had time to start the next command's process. */
async function afterAPause(jail: Jail, script: string, environment: Record<string, string> = {}) {
  await jail.run({ command: ['true'], access: 'workspace-write' })
  await sleep(400)
  const sent = uptimeSeconds()
  const result = await jail.run({ command: bash(script), access: 'workspace-write', environment })
  assert.equal(result.exitCode, 0, result.stderr)
  return { sent, stdout: result.stdout }
}

/** When the process that printed `/proc/self/stat` started, in seconds since boot. */
function startedAt(stat: string): number {
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ')
  return Number(fields[19]) / 100
}

describe("the warm jail's next command started ahead", () => {
  it('runs a later command in a process started before it was sent (no fork on its path)', async (t) => {
    const { jail } = await jailFixture(t)
    await assertJailAvailable(jail)
    const { sent, stdout } = await afterAPause(jail, 'cat /proc/self/stat >&2; cat /proc/$$/stat')
    // The process bash runs in was started while the jail waited, at least 200 ms before.
    assert.ok(startedAt(stdout) < sent - 0.2, `started ${startedAt(stdout)}, sent ${sent}`)
    // After commands that went the direct way (the waiter left unused died with their
    // stragglers), the next one is started ahead again.
    for (const command of [['no-such-program'], ['true']]) {
      await sleep(100)
      await jail.run({ command, access: 'workspace-write', environment: { 'NOT-A-NAME': '1' } })
    }
    await sleep(400)
    const again = uptimeSeconds()
    const next = await jail.run({ command: bash('cat /proc/$$/stat'), access: 'workspace-write' })
    assert.ok(
      startedAt(next.stdout) < again - 0.2,
      `started ${startedAt(next.stdout)}, sent ${again}`,
    )
  })

  it('gives the command exactly the environment, folder and streams of a direct start', async (t) => {
    const { jail } = await jailFixture(t, { 'sub/file.txt': 'x' })
    await assertJailAvailable(jail)
    const environment = {
      SPACES: 'a b  c',
      QUOTE: 'it\'s "quoted" $HOME `x` \\',
      NEWLINE: 'one\ntwo',
      PWD: '/somewhere/else',
      IFS: ':',
    }
    const run = (extra: Record<string, string>) =>
      jail.run({
        command: ['env', '-0'],
        access: 'workspace-write',
        cwd: '/workspace/sub',
        environment: { ...environment, ...extra },
      })
    await jail.run({ command: ['true'], access: 'workspace-write' })
    await sleep(400)
    const ahead = await run({})
    // A name no shell variable can have makes the supervisor start the command itself.
    const direct = await run({ 'NOT-A-SHELL-NAME': '1' })
    const sorted = (output: string) => output.split('\0').sort()
    const directEnvironment = sorted(direct.stdout)
    assert.ok(directEnvironment.includes('NOT-A-SHELL-NAME=1'), 'the control: the odd name')
    assert.deepEqual(
      sorted(ahead.stdout),
      directEnvironment.filter((entry) => entry !== 'NOT-A-SHELL-NAME=1'),
    )
    assert.ok(sorted(ahead.stdout).includes('PWD=/somewhere/else'))
    assert.ok(sorted(ahead.stdout).includes('IFS=:'))
    assert.ok(!sorted(ahead.stdout).some((entry) => entry.startsWith('OLDPWD=')))
    // Only stdin, stdout and stderr reach the command either way (3 is ls's own listing).
    await sleep(400)
    const fds = async (extra: Record<string, string>) =>
      (
        await jail.run({
          command: ['ls', '/proc/self/fd'],
          access: 'workspace-write',
          environment: extra,
        })
      ).stdout
    assert.equal(await fds({}), '0\n1\n2\n3\n')
    assert.equal(await fds({ 'NOT-A-SHELL-NAME': '1' }), '0\n1\n2\n3\n')
    const { stdout } = await afterAPause(
      jail,
      'pwd -P; readlink /proc/$$/fd/0; [ "$(cut -d" " -f5 /proc/$$/stat)" = $$ ] && echo leads its group',
    )
    assert.equal(stdout, '/workspace\n/dev/null\nleads its group\n')
  })

  it('answers a program that cannot start, and a folder that is gone or closed, as a direct start does', async (t) => {
    const { jail, workspace } = await jailFixture(t, { 'closed/file.txt': 'x' })
    await assertJailAvailable(jail)
    await jail.run({ command: ['true'], access: 'workspace-write' })
    // A script whose interpreter is missing: exec refuses it, as the direct start reports.
    fs.writeFileSync(`${workspace}/orphan.sh`, '#!/no/such/interpreter\necho never\n', {
      mode: 0o755,
    })
    await sleep(300)
    const orphan = await jail.run({ command: ['./orphan.sh'], access: 'workspace-write' })
    assert.equal(orphan.exitCode, 127)
    assert.match(orphan.stderr, /spawn \.\/orphan\.sh ENOENT/)
    await sleep(300)
    const missing = await jail.run({ command: ['no-such-program'], access: 'workspace-write' })
    assert.equal(missing.exitCode, 127)
    assert.match(missing.stderr, /spawn no-such-program ENOENT/)
    await sleep(300)
    const gone = await jail.run({
      command: ['true'],
      access: 'workspace-write',
      cwd: '/workspace/no-such-folder',
    })
    assert.equal(gone.exitCode, 127)
    assert.match(gone.stderr, /ENOENT/)
    // A folder the jail's user may not enter fails as the direct start's chdir does.
    fs.chmodSync(`${workspace}/closed`, 0o600)
    await sleep(300)
    const closed = await jail.run({
      command: ['true'],
      access: 'workspace-write',
      cwd: '/workspace/closed',
    })
    assert.equal(closed.exitCode, 127)
    assert.match(closed.stderr, /spawn true EACCES/)
    // The control: the next command is still started ahead and runs.
    const { stdout } = await afterAPause(jail, 'echo fine')
    assert.equal(stdout, 'fine\n')
  })

  it('runs a command whose variables dash would check, or whose PATH is relative, as a direct start does', async (t) => {
    const { jail, workspace } = await jailFixture(t, { 'bin/tool': '#!/bin/sh\necho tool\n' })
    await assertJailAvailable(jail)
    fs.chmodSync(`${workspace}/bin/tool`, 0o755)
    // dash refuses `export OPTIND=x` ("Illegal number"); a direct start passes any value.
    const { stdout } = await afterAPause(
      jail,
      'tr "\\0" "\\n" < /proc/$$/environ | grep ^OPTIND=',
      {
        OPTIND: 'not-a-number',
      },
    )
    assert.equal(stdout, 'OPTIND=not-a-number\n')
    // A relative PATH folder is searched from the command's folder (here /tmp, without bin/tool),
    // not the supervisor's (/workspace, with it).
    const relative = async (cwd: string) => {
      await sleep(400)
      return jail.run({
        command: ['tool'],
        access: 'workspace-write',
        cwd,
        environment: { PATH: 'bin' },
      })
    }
    const missing = await relative('/tmp')
    assert.equal(missing.exitCode, 127)
    assert.match(missing.stderr, /spawn tool ENOENT/)
    assert.equal((await relative('/workspace')).stdout, 'tool\n', 'the control')
  })

  it('keeps the deadline, the interrupt and the exit status of the command itself', async (t) => {
    const { jail } = await jailFixture(t)
    await assertJailAvailable(jail)
    await jail.run({ command: ['true'], access: 'workspace-write' })
    await sleep(300)
    const interrupted = await jail.run({
      command: bash('trap "echo interrupted; exit 7" INT; sleep 30 & wait'),
      access: 'workspace-write',
      timeoutMs: 500,
    })
    assert.equal(interrupted.timedOut, true)
    assert.match(interrupted.stdout, /interrupted/)
    await sleep(300)
    const killed = await jail.run({ command: bash('kill -TERM $$'), access: 'workspace-write' })
    assert.equal(killed.signal, 'SIGTERM')
    await sleep(300)
    const status = await jail.run({ command: bash('exit 42'), access: 'workspace-write' })
    assert.equal(status.exitCode, 42)
  })
})
