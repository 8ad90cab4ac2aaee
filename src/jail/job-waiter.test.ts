import assert from 'node:assert/strict'
import { describe, it, type TestContext } from 'node:test'
import type { Jail, JailRequest } from './jail.ts'
import { DirectoryTree } from '../workspace/directory-tree.ts'
import type { EntryStat } from '../ports/workspace-view.ts'
import { assertJailAvailable, jailFixture } from './test-jail.ts'

const IS_ROOT = process.getuid?.() === 0

/** Long enough for the jails started ahead to be ready on a loaded machine. */
const PAUSE_MS = 1500

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms))

/** Prints which jail a job runs in: when its PID 1 started (clock ticks since boot), on a line. */
const JAIL_ID = `echo "jail $(cut -d' ' -f22 /proc/1/stat)"`

async function readyJail(t: TestContext): Promise<Jail> {
  return (await readyFixture(t)).jail
}

/**
 * The workspace folder, but the host's disk fails every look at `broken.txt` (an I/O error):
 * a job that writes it cannot be read back.
 */
class FailingTree extends DirectoryTree {
  override statNow(relativePath: string): EntryStat | undefined {
    if (relativePath === 'broken.txt')
      throw Object.assign(new Error('EIO: i/o error, lstat broken.txt'), { code: 'EIO' })
    return super.statNow(relativePath)
  }
}

/** A jail whose jails started ahead are ready, and its workspace folder. */
async function readyFixture(
  t: TestContext,
  options: { failingDisk?: boolean } = {},
): Promise<{ jail: Jail; workspace: string }> {
  const { jail, workspace } = await jailFixture(
    t,
    { 'a.txt': 'a\n' },
    {
      layers: 'overlay',
      waitForWarmJail: false,
      ...(options.failingDisk === true ? { treeOf: (root) => new FailingTree(root) } : {}),
    },
  )
  await assertJailAvailable(jail)
  // The first job goes the old way and starts the jails ahead.
  await job(jail, 'true')
  await pause(PAUSE_MS)
  return { jail, workspace }
}

async function job(
  jail: Jail,
  script: string,
  options: Partial<Omit<JailRequest, 'timeoutMs'>> = {},
) {
  const started = await jail.start({
    command: ['/bin/bash', '-c', script],
    access: 'workspace-write',
    ...options,
  })
  return started.finished
}

/** The jail a job's output names (see JAIL_ID). */
function jailOf(stdout: string): string {
  const line = stdout.split('\n').find((text) => text.startsWith('jail '))
  assert.ok(line !== undefined, stdout)
  return line
}

describe(
  'a jail started ahead, one job after another',
  { skip: !IS_ROOT && 'overlays need root' },
  () => {
    it('runs back-to-back jobs in one jail, and leaves nothing of a job to the next', async (t) => {
      const jail = await readyJail(t)
      const first = await job(
        jail,
        [
          JAIL_ID,
          'echo left > /tmp/left; mkdir -p /tmp/deep/er; chmod 000 /tmp/deep; echo left > /dev/shm/left',
          'ipcmk -M 4096 >/dev/null',
          '(setsid bash -c "exec -a eitri-left-behind sleep 300" &)',
          'sleep 0.2',
          // Positive control: each is there while the job runs.
          'ls -A /tmp /dev/shm; ipcs -m | grep -c "^0x"; ps -eo args | grep -c "^eitri-left-behind"',
        ].join('; '),
      )
      assert.equal(first.exitCode, 0, first.stderr)
      assert.match(first.stdout, /\/dev\/shm:\nleft\n\n\/tmp:\ndeep\nleft\n1\n1\n$/)
      // Given back once its waiter said it is ready again (a job sent at once takes the other).
      await pause(PAUSE_MS)
      const second = await job(
        jail,
        `${JAIL_ID}; ls -A /tmp /dev/shm; ipcs -m | grep -c "^0x"; ps -eo args | grep -c "^eitri-left-behind"; touch /x 2>&1`,
      )
      assert.equal(jailOf(second.stdout), jailOf(first.stdout), 'the same jail took it')
      assert.match(second.stdout, /\/dev\/shm:\n\n\/tmp:\n0\n0\n.*Read-only file system\n$/)
    })

    it('ends a jail whose job changed its waiter (priority, limits) rather than give it the next job', async (t) => {
      const jail = await readyJail(t)
      // A custom time slice (sched_setattr's runtime for SCHED_OTHER), inherited by every job.
      const slice = `python3 -c 'import ctypes, struct, sys; l=ctypes.CDLL(None, use_errno=True); sys.exit(l.syscall(314, 1, struct.pack("IIQiIQQQ", 48, 0, 0, 0, 0, 100000, 0, 0), 0))'`
      for (const change of [
        'renice -n 5 -p 1',
        'prlimit --pid 1 --nofile=64:64',
        'chrt --other --reset-on-fork --pid 0 1',
        slice,
      ]) {
        const changed = await job(jail, `${JAIL_ID}; ${change} >/dev/null && echo changed`)
        // Positive control: the job could change it.
        assert.match(changed.stdout, /changed\n$/, changed.stderr)
        const next = await job(jail, JAIL_ID)
        assert.notEqual(jailOf(next.stdout), jailOf(changed.stdout), change)
        await pause(PAUSE_MS)
      }
    })

    it("puts back the modes and times a job gave the jail's own folders and nodes", async (t) => {
      const jail = await readyJail(t)
      const state = 'stat -c "%n %a %y" /tmp /dev/shm /dev/mqueue /dev/pts /dev/pts/ptmx'
      const pty = `python3 -c 'import pty; pty.openpty(); print("pty")' 2>&1 | tail -1`
      const first = await job(
        jail,
        [
          JAIL_ID,
          'chmod 000 /dev/pts/ptmx && chmod 700 /dev/shm /dev/mqueue /dev/pts /tmp',
          'touch -d 2001-01-01 /tmp /dev/shm /dev/mqueue',
          state,
          pty,
        ].join('; '),
      )
      // Positive control: the job could change each of them, and no pty opens any more.
      assert.match(
        first.stdout,
        /\/tmp 700 2001-01-01[^]*\/dev\/pts\/ptmx 0 .*\nOSError: out of pty devices\n$/,
        first.stderr,
      )
      await pause(PAUSE_MS)
      const next = await job(jail, `${JAIL_ID}; ${state}; ${pty}`)
      assert.equal(jailOf(next.stdout), jailOf(first.stdout), 'the same jail took it')
      assert.doesNotMatch(next.stdout, /2001-01-01/)
      assert.match(
        next.stdout,
        /\/tmp 755 [^]*\/dev\/mqueue 1777 [^]*\/dev\/pts 755 [^]*\/dev\/pts\/ptmx 666 .*\npty\n$/,
      )
    })

    it('ends a jail whose job left an attribute on its own folders rather than give it the next job', async (t) => {
      const jail = await readyJail(t)
      const read = `python3 -c 'import os; print([os.getxattr(f, "user.left") for f in ("/tmp", "/dev/shm") if "user.left" in os.listxattr(f)])'`
      const first = await job(
        jail,
        `${JAIL_ID}; python3 -c 'import os; [os.setxattr(f, "user.left", b"job one") for f in ("/tmp", "/dev/shm")]'; ${read}`,
      )
      // Positive control: both carry it while the job runs.
      assert.match(first.stdout, /\n\[b'job one', b'job one'\]\n$/, first.stderr)
      await pause(PAUSE_MS)
      const next = await job(jail, `${JAIL_ID}; ${read}`)
      assert.match(next.stdout, /\n\[\]\n$/, next.stderr)
      assert.notEqual(jailOf(next.stdout), jailOf(first.stdout))
    })

    it("leaves no setting of the jail's namespaces to the next job: /proc/sys is read-only", async (t) => {
      const jail = await readyJail(t)
      const settings = ['kernel/pid_max', 'kernel/msgmnb', 'kernel/shmmni', 'fs/mqueue/queues_max']
      const show = settings.map((name) => `cat /proc/sys/${name}`).join('; ')
      const first = await job(
        jail,
        [
          JAIL_ID,
          // Positive control: the jail's user owns these settings of its own namespaces (as
          // root of the user namespace that owns them), so only the mount stops the write.
          'stat -c %u /proc/sys/kernel/msgmnb; id -u',
          show,
          ...settings.map((name) => `echo 400 > /proc/sys/${name}`),
        ].join('; '),
      )
      const [owner, user, ...before] = first.stdout.split('\n').slice(1)
      assert.equal(owner, user, first.stdout)
      assert.equal(before.slice(0, 4).includes('400'), false)
      assert.equal(
        first.stderr.match(/Read-only file system/g)?.length,
        settings.length,
        first.stderr,
      )
      await pause(PAUSE_MS)
      const next = await job(jail, `${JAIL_ID}; ${show}`)
      assert.equal(jailOf(next.stdout), jailOf(first.stdout), 'the same jail took it')
      assert.deepEqual(next.stdout.split('\n').slice(1, 5), before.slice(0, 4))
    })

    it("keeps the waiter out of its jobs' reach: no trace, no memory, no descriptors, no signal", async (t) => {
      const jail = await readyJail(t)
      const ptrace = (pid: string) =>
        `python3 -c 'import ctypes,sys; libc=ctypes.CDLL(None, use_errno=True); print(libc.ptrace(16, int(sys.argv[1]), 0, 0))' ${pid}`
      const result = await job(
        jail,
        [
          JAIL_ID,
          // Positive control: a process of its own can be traced.
          'sleep 30 & own=$!; sleep 0.1',
          ptrace('$own'),
          ptrace('1'),
          'head -c1 /proc/1/mem >/dev/null 2>&1 || echo no-memory',
          'ls /proc/1/fd >/dev/null 2>&1 || echo no-descriptors',
          'kill -9 1; kill -STOP 1; sleep 0.1',
          'kill $own',
        ].join('; '),
      )
      assert.match(result.stdout, /\n0\n-1\nno-memory\nno-descriptors\n$/, result.stderr)
      await pause(PAUSE_MS)
      const next = await job(jail, JAIL_ID)
      assert.equal(jailOf(next.stdout), jailOf(result.stdout), 'the waiter still runs, unchanged')
    })

    it('kills a job through its waiter, and gives the jail the next job', async (t) => {
      const jail = await readyJail(t)
      const started = await jail.start({
        command: ['/bin/bash', '-c', `${JAIL_ID}; sleep 300 & sleep 300`],
        access: 'workspace-write',
      })
      await pause(300)
      started.process.kill()
      const killed = await started.finished
      assert.equal(killed.signal, 'SIGKILL')
      await pause(PAUSE_MS)
      const next = await job(jail, `${JAIL_ID}; ps -eo args | grep -c "^sleep 300"`)
      assert.equal(jailOf(next.stdout), jailOf(killed.stdout))
      assert.match(next.stdout, /\n0\n$/)
    })

    it('ends a jail whose job could not be read back rather than give it the next job', async (t) => {
      const { jail } = await readyFixture(t, { failingDisk: true })
      const before = await job(jail, JAIL_ID)
      await pause(PAUSE_MS)
      const failed = await jail.start({
        command: ['/bin/bash', '-c', `${JAIL_ID}; echo x > broken.txt`],
        access: 'workspace-write',
      })
      await assert.rejects(failed.finished, /EIO/)
      const failedIn = jailOf(failed.process.stdout.text())
      // Positive control: jails are reused here (the job took the one the job before ran in).
      assert.equal(failedIn, jailOf(before.stdout))
      await pause(PAUSE_MS)
      const next = await job(jail, `${JAIL_ID}; cat a.txt`)
      assert.notEqual(jailOf(next.stdout), failedIn)
      assert.match(next.stdout, /\na\n$/)
    })

    it("never gives a jail that ran one sharer's job to another's", async (t) => {
      const jail = await readyJail(t)
      const mine = await job(jail, JAIL_ID, { sharer: 'one' })
      await pause(PAUSE_MS)
      const again = await job(jail, JAIL_ID, { sharer: 'one' })
      // Positive control: the same sharer's next job takes it.
      assert.equal(jailOf(again.stdout), jailOf(mine.stdout))
      await pause(PAUSE_MS)
      const theirs = await job(jail, JAIL_ID, { sharer: 'two' })
      assert.notEqual(jailOf(theirs.stdout), jailOf(mine.stdout))
      await pause(PAUSE_MS)
      // Each keeps its own: neither takes the other's.
      const mineAgain = await job(jail, JAIL_ID, { sharer: 'one' })
      await pause(PAUSE_MS)
      const theirsAgain = await job(jail, JAIL_ID, { sharer: 'two' })
      assert.equal(jailOf(mineAgain.stdout), jailOf(mine.stdout))
      assert.equal(jailOf(theirsAgain.stdout), jailOf(theirs.stdout))
    })

    it('removes the POSIX message queues a job left', async (t) => {
      const jail = await readyJail(t)
      const open = (flags: string) =>
        `python3 -c 'import ctypes, os; l=ctypes.CDLL(None, use_errno=True); print("queue", l.mq_open(b"/eitri-left", ${flags}, 0o600, None), ctypes.get_errno())'`
      const first = await job(
        jail,
        `${JAIL_ID}; ${open('os.O_CREAT|os.O_RDWR')}; ls -A /dev/mqueue`,
      )
      // Positive control: the queue is there while the job runs.
      assert.match(first.stdout, /\nqueue 3 0\neitri-left\n$/, first.stderr)
      await pause(PAUSE_MS)
      const next = await job(jail, `${JAIL_ID}; ${open('os.O_RDWR')}; ls -A /dev/mqueue`)
      assert.equal(jailOf(next.stdout), jailOf(first.stdout), 'the same jail took it')
      assert.match(next.stdout, /\nqueue -1 2\n$/)
    })

    it("leaves no key for the next job or another sharer's: the jail's user is one kernel user in every jail", async (t) => {
      const jail = await readyJail(t)
      // A key in the user keyring that its user may read: the same kernel user in every jail.
      const plant = `python3 -c 'import ctypes; l=ctypes.CDLL(None, use_errno=True); l.syscall.restype=ctypes.c_long; k=l.syscall(248, b"user", b"eitri-left-key", b"secret", 6, ctypes.c_long(-4)); print("key", k, ctypes.get_errno()); print(l.syscall(250, 5, ctypes.c_long(k), 0x3f3f0000))'`
      const count = 'grep -c eitri-left-key /proc/keys'
      const first = await job(jail, `${JAIL_ID}; ${plant}; ${count}`)
      assert.match(first.stdout, /\nkey -1 38\n-1\n0\n$/, 'refused as by a kernel without keys')
      await pause(PAUSE_MS)
      const next = await job(jail, `${JAIL_ID}; ${count}`)
      assert.equal(jailOf(next.stdout), jailOf(first.stdout), 'the same jail took it')
      assert.match(next.stdout, /\n0\n$/)
      const theirs = await job(jail, count, { sharer: 'another' })
      assert.equal(theirs.stdout, '0\n')
    })

    it("relays a job's output whole, each stream apart, and how it ended", async (t) => {
      const jail = await readyJail(t)
      const loud = await job(
        jail,
        'for i in $(seq 1 20000); do echo "out $i"; echo "err $i" >&2; done; exit 7',
        { maxOutputChars: 1_000_000 },
      )
      assert.equal(loud.exitCode, 7)
      const expected = (name: string) =>
        Array.from({ length: 20000 }, (_, index) => `${name} ${index + 1}\n`).join('')
      assert.equal(loud.stdout, expected('out'))
      assert.equal(loud.stderr, expected('err'))
      const signalled = await job(jail, 'kill -TERM $$')
      assert.equal(signalled.exitCode, null)
      assert.equal(signalled.signal, 'SIGTERM')
    })
  },
)
