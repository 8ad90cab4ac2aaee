import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { describe, it, type TestContext } from 'node:test'
import type { Jail, JailRequest } from './jail.ts'
import { launcherSpawner } from './launcher-spawner.ts'
import { assertJailAvailable, jailFixture } from './test-jail.ts'

const IS_ROOT = process.getuid?.() === 0

/** Long enough for a jail started ahead to be ready on a loaded machine; the age bound below. */
const PAUSE_MS = 1500

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * Prints how long ago (seconds) the jail's PID 1 started, on stderr: the waiter of a jail
 * started ahead is older than the start; a cold start's PID 1 starts with it.
 */
const AGE = `awk -v t="$(cut -d' ' -f22 /proc/1/stat)" '{ printf "%.2f", $1 - t / 100 }' /proc/uptime >&2`

async function overlayJail(t: TestContext, files: Record<string, string> = {}) {
  // Cold starts are what these tests are about: no warm jail waited for.
  const fixture = await jailFixture(t, files, { layers: 'overlay', waitForWarmJail: false })
  await assertJailAvailable(fixture.jail)
  return fixture
}

async function background(
  jail: Jail,
  request: Omit<JailRequest, 'timeoutMs'>,
  options: { oneShot?: boolean } = {},
) {
  const job = await jail.start(request, options)
  return job.finished
}

describe('a cold start in a jail started ahead', { skip: !IS_ROOT && 'overlays need root' }, () => {
  it('runs the next background job in a jail already running; a one-shot start leaves none', async (t) => {
    const { jail } = await overlayJail(t)
    const first = await background(jail, { command: ['true'], access: 'workspace-write' })
    assert.equal(first.exitCode, 0, first.stderr)
    assert.equal(jail.layers.mode, 'overlay')
    await pause(PAUSE_MS)
    const next = await background(jail, {
      command: ['sh', '-c', AGE],
      access: 'workspace-write',
    })
    assert.equal(next.exitCode, 0, next.stderr)
    // The jail's PID 1 is the waiter, started with the jail before the start was asked.
    assert.ok(Number(next.stderr) >= 1, `the command's process is ${next.stderr} s old`)

    // Positive control: after a one-shot start nothing waits, so the process is new.
    const { jail: other } = await overlayJail(t)
    const once = await background(
      other,
      { command: ['true'], access: 'workspace-write' },
      { oneShot: true },
    )
    assert.equal(once.exitCode, 0, once.stderr)
    await pause(PAUSE_MS)
    const fresh = await background(other, { command: ['sh', '-c', AGE], access: 'workspace-write' })
    assert.equal(fresh.exitCode, 0, fresh.stderr)
    assert.ok(Number(fresh.stderr) < 1, `the command's process is ${fresh.stderr} s old`)
  })

  it('keeps two started ahead: back-to-back jobs each find one ready', async (t) => {
    const { jail } = await overlayJail(t)
    await background(jail, { command: ['true'], access: 'workspace-write' })
    await pause(2 * PAUSE_MS)
    const request = { command: ['sh', '-c', AGE], access: 'workspace-write' as const }
    const first = await background(jail, request)
    const second = await background(jail, request)
    assert.ok(Number(first.stderr) >= 1, `first: ${first.stderr} s`)
    assert.ok(Number(second.stderr) >= 1, `second: ${second.stderr} s`)
  })

  it('ends the jails started ahead after an idle time; the next start starts them again', async (t) => {
    const fixture = await jailFixture(
      t,
      {},
      {
        layers: 'overlay',
        waitForWarmJail: false,
        aheadIdleMs: 2 * PAUSE_MS,
      },
    )
    const { jail } = fixture
    await assertJailAvailable(jail)
    const before = new Set(childrenOfSelf())
    const newChildren = () => childrenOfSelf().filter((pid) => !before.has(pid))
    await background(jail, { command: ['true'], access: 'workspace-write' })
    await pause(PAUSE_MS)
    // Positive control: before the idle time they wait.
    assert.equal(newChildren().length, 2, `waiting: ${newChildren().join(', ')}`)
    await pause(2 * PAUSE_MS)
    assert.deepEqual(newChildren(), [], 'none waits after the idle time')
    const request = { command: ['sh', '-c', AGE], access: 'workspace-write' as const }
    const fresh = await background(jail, request)
    assert.ok(Number(fresh.stderr) < 1, `the old way: ${fresh.stderr} s`)
    await pause(PAUSE_MS)
    const ahead = await background(jail, request)
    assert.ok(Number(ahead.stderr) >= 1, `started ahead again: ${ahead.stderr} s`)
  })

  it('gives the command what a cold start gives it: user, folder, environment, input, limits, descriptors, capabilities', async (t) => {
    const { jail } = await overlayJail(t, { 'sub/file.txt': 'x\n' })
    const probe = [
      'id',
      'pwd',
      'env | sort',
      'cat',
      'cat /proc/$$/limits',
      'ls /proc/$$/fd',
      "grep -E '^(Cap|NoNewPrivs|Seccomp)' /proc/$$/status",
      'ls -a /tmp',
      'echo mine > /tmp/left',
    ].join('; ')
    const request = {
      command: ['sh', '-c', `${probe}; ${AGE}`],
      access: 'workspace-write' as const,
      cwd: '/workspace/sub',
      environment: { EITRI_TEST: 'a b=c' },
    }
    // The jail's first start goes the old way; the second takes the jail started after it.
    const old = await background(jail, request)
    await pause(PAUSE_MS)
    const ahead = await background(jail, request)
    assert.equal(old.exitCode, 0, old.stderr)
    assert.equal(ahead.exitCode, 0, ahead.stderr)
    assert.ok(Number(old.stderr) < 1, `old way: ${old.stderr} s`)
    assert.ok(Number(ahead.stderr) >= 1, `ahead: ${ahead.stderr} s`)
    assert.match(ahead.stdout, /^uid=65534\(nobody\)/)
    assert.match(ahead.stdout, /\/workspace\/sub\n/)
    assert.match(ahead.stdout, /EITRI_TEST=a b=c\n/)
    // /tmp is the jail's own: the first job's file is not in the second's.
    assert.doesNotMatch(ahead.stdout, /left/)
    // The same, but for the waiter's filter of the key calls (job-waiter-script.ts): more, not less.
    assert.match(ahead.stdout, /\nSeccomp:\t2\n/)
    const unfiltered = (stdout: string): string => stdout.replace(/^Seccomp.*\n/gm, '')
    assert.equal(unfiltered(ahead.stdout), unfiltered(old.stdout))
    // A job with input to give goes the old way (a jail started ahead's job reads /dev/null).
    await pause(PAUSE_MS)
    const stdin = 'line one\nline two with \u0000 a NUL and é\n'
    const fed = await background(jail, { ...request, stdin })
    assert.equal(fed.exitCode, 0, fed.stderr)
    assert.ok(fed.stdout.includes(stdin), 'the input reached the program whole')
    assert.ok(Number(/[0-9.]+$/.exec(fed.stderr)?.[0]) < 1, `old way: ${fed.stderr} s`)
  })

  it('sets the limits itself, as prlimit would: processes, file size, and data without a memory cgroup', async (t) => {
    // No memory cgroup: memory is bounded by RLIMIT_DATA, which the waiter sets too.
    const fixture = await jailFixture(
      t,
      {},
      {
        layers: 'overlay',
        waitForWarmJail: false,
        memoryCgroups: false,
        limits: { processes: 77, fileSizeBytes: 4096 * 1000, memoryBytes: 512 * 1024 * 1024 },
      },
    )
    await assertJailAvailable(fixture.jail)
    const request = {
      command: [
        'sh',
        '-c',
        `grep -E '^Max (processes|file size|data size)' /proc/$$/limits; ${AGE}`,
      ],
      access: 'workspace-write' as const,
    }
    const old = await background(fixture.jail, request)
    await pause(PAUSE_MS)
    const ahead = await background(fixture.jail, request)
    assert.ok(Number(old.stderr) < 1, `old way: ${old.stderr} s`)
    assert.ok(Number(ahead.stderr) >= 1, `ahead: ${ahead.stderr} s`)
    assert.match(ahead.stdout, /Max file size +4096000 +4096000 /)
    assert.match(ahead.stdout, /Max data size +536870912 +536870912 /)
    assert.match(ahead.stdout, /Max processes +77 +77 /)
    assert.equal(ahead.stdout, old.stdout)
  })

  it("shows the workspace as it is at the command's start and brings its writes back", async (t) => {
    const { jail, workspace } = await overlayJail(t, { 'a.txt': 'one\n' })
    await background(jail, { command: ['true'], access: 'workspace-write' })
    await pause(PAUSE_MS)
    // Written after the jail was started ahead, before the command: a fresh overlay shows it.
    fs.writeFileSync(path.join(workspace, 'late.txt'), 'late\n')
    const result = await background(jail, {
      command: ['sh', '-c', `cat a.txt late.txt; echo made > made.txt; ${AGE}`],
      access: 'workspace-write',
    })
    assert.equal(result.exitCode, 0, result.stderr)
    assert.ok(Number(result.stderr) >= 1, `ahead: ${result.stderr} s`)
    assert.equal(result.stdout, 'one\nlate\n')
    assert.equal(fs.readFileSync(path.join(workspace, 'made.txt'), 'utf8'), 'made\n')
    // Read-only: a jail started ahead for writing is not used, and nothing comes back.
    const reading = await background(jail, {
      command: ['sh', '-c', 'echo no > no.txt'],
      access: 'read-only',
    })
    assert.notEqual(reading.exitCode, 0)
    // The next read-only one takes the read-only jail started after it, and cannot write either.
    await pause(PAUSE_MS)
    const again = await background(jail, {
      command: ['sh', '-c', `${AGE}; echo no > no.txt`],
      access: 'read-only',
    })
    assert.notEqual(again.exitCode, 0)
    assert.match(again.stderr, /^[0-9.]+sh: 1: cannot create no.txt: Read-only file system/)
    assert.ok(Number(/^[0-9.]+/.exec(again.stderr)?.[0]) >= 1, `ahead: ${again.stderr}`)
    assert.equal(fs.existsSync(path.join(workspace, 'no.txt')), false)
  })

  it("mounts the command's overlay ahead on a jail started ahead, checked again when taken", async (t) => {
    const { jail, workspace } = await jailFixture(
      t,
      { 'a.txt': 'one\n' },
      { layers: 'overlay', waitForWarmJail: false, privateInside: ['state'] },
    )
    await assertJailAvailable(jail)
    const before = new Set(childrenOfSelf())
    await background(jail, { command: ['true'], access: 'workspace-write' })
    await pause(PAUSE_MS)
    const waiting = childrenOfSelf().filter(
      (pid) => !before.has(pid) && commandOf(pid).includes('bwrap'),
    )
    assert.equal(waiting.length, 2)
    // Each waiting bubblewrap is in the layer host's mount namespace, and binds its point: the
    // point already holds an overlay (before, it was mounted when a start took the jail).
    const hostTable = (pid: number): string => fs.readFileSync(`/proc/${pid}/mountinfo`, 'utf8')
    for (const pid of waiting) {
      assert.ok(overlayOn(hostTable(pid), pointOf(pid)), `${pointOf(pid)}:\n${hostTable(pid)}`)
    }
    // A private path that appears after the overlay was mounted ahead is still covered: the
    // start checks what the overlay was made from, and mounts a fresh one.
    fs.mkdirSync(path.join(workspace, 'state'))
    fs.writeFileSync(path.join(workspace, 'state/secret.json'), 'SECRET')
    fs.writeFileSync(path.join(workspace, 'late.txt'), 'late\n')
    const job = await jail.start({
      command: [
        'sh',
        '-c',
        `cat a.txt late.txt; cat state/secret.json; awk '$5 == "/workspace" { print $4 > "/dev/stderr" }' /proc/self/mountinfo; ${AGE}`,
      ],
      access: 'workspace-write',
    })
    const result = await job.finished
    const point = result.stderr.split('\n').find((line) => line.startsWith('/')) ?? ''
    assert.ok(
      waiting.some((pid) => pointOf(pid) === point),
      `${point} in ${waiting.map(pointOf).join(', ')}`,
    )
    assert.ok(Number(/[0-9.]+$/.exec(result.stderr)?.[0]) >= 1, `ahead: ${result.stderr}`)
    assert.equal(result.stdout, 'one\nlate\n')
    assert.match(result.stderr, /state\/secret.json: No such file or directory/)
    // It changed nothing: its overlay is unmounted after the answer, and the next job's mounted
    // on its point ahead (the jail takes the next job).
    await pause(PAUSE_MS)
    for (const pid of waiting) {
      assert.ok(overlayOn(hostTable(pid), pointOf(pid)), `${pointOf(pid)}:\n${hostTable(pid)}`)
    }
  })

  it('reports a command that is not there as a cold start does (127)', async (t) => {
    const { jail } = await overlayJail(t)
    const before = new Set(childrenOfSelf())
    const old = await background(jail, { command: ['no-such-program'], access: 'workspace-write' })
    await pause(PAUSE_MS)
    const waiting = childrenOfSelf().filter((pid) => !before.has(pid))
    // Two, already bubblewrap before the command was known (a launcher ahead would be Perl).
    assert.equal(waiting.length, 2)
    for (const pid of waiting) assert.match(commandOf(pid), /bwrap/)
    const ahead = await background(jail, {
      command: ['no-such-program'],
      access: 'workspace-write',
    })
    // The start took a jail that was waiting, and gave it back: no bubblewrap started since.
    await pause(PAUSE_MS)
    const after = childrenOfSelf().filter((pid) => !before.has(pid))
    assert.deepEqual(after.sort(), waiting.sort())
    assert.equal(old.exitCode, 127, old.stderr)
    assert.equal(ahead.exitCode, 127, ahead.stderr)
    assert.match(ahead.stderr, /failed to execute no-such-program: No such file or directory/)
  })

  it('is not used once it ended: the start goes the old way', async (t) => {
    const { jail } = await overlayJail(t)
    const before = new Set(childrenOfSelf())
    await background(jail, { command: ['true'], access: 'workspace-write' })
    await pause(PAUSE_MS)
    // The jails started ahead are this process's only new children (launchers become bubblewrap).
    const started = childrenOfSelf().filter(
      (pid) => !before.has(pid) && commandOf(pid).includes('bwrap'),
    )
    assert.equal(started.length, 2, `new bubblewrap children: ${started.join(', ')}`)
    for (const pid of started) process.kill(-pid, 'SIGKILL')
    await pause(300)
    const result = await background(jail, {
      command: ['sh', '-c', `echo ran; ${AGE}`],
      access: 'workspace-write',
    })
    assert.equal(result.exitCode, 0, result.stderr)
    assert.equal(result.stdout, 'ran\n')
    assert.ok(Number(result.stderr) < 1, `a new process: ${result.stderr} s`)
  })
})

/**
 * The processes this process started: its children, and those of the spawner its launchers are
 * forked from (launcher-spawner.ts), that spawner left out.
 */
function childrenOfSelf(): number[] {
  const spawner = launcherSpawner().pid
  const parents = [process.pid, ...(spawner === undefined ? [] : [spawner])]
  return parents.flatMap(childrenOf).filter((pid) => pid !== spawner)
}

/** The children of `pid`, from /proc. */
function childrenOf(pid: number): number[] {
  return fs
    .readdirSync(`/proc/${pid}/task`)
    .flatMap((task) => fs.readFileSync(`/proc/${pid}/task/${task}/children`, 'utf8').split(' '))
    .filter((word) => word.trim() !== '')
    .map(Number)
}

/**
 * The layer host's point a waiting bubblewrap binds at the jail's workspace: the root of the
 * /workspace bind in its reaper's mount table (its child, PID 1 in the jail). Its command line
 * no longer names it (hidden-args.ts).
 */
function pointOf(pid: number): string {
  const reaper = fs.readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(' ')[0]
  const table = fs.readFileSync(`/proc/${reaper ?? ''}/mountinfo`, 'utf8').split('\n')
  const bind = table.find((line) => line.split(' ')[4] === '/workspace')
  return bind?.split(' ')[3] ?? ''
}

/** Whether a mount table shows an overlay mounted on `point`. */
function overlayOn(table: string, point: string): boolean {
  return table.split('\n').some((line) => line.includes(` ${point} `) && / - overlay /.test(line))
}

function commandOf(pid: number): string {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8')
  } catch {
    return ''
  }
}
