import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { describe, it, type TestContext } from 'node:test'
import { launcherSpawner } from './launcher-spawner.ts'
import { MemoryCgroup, MemoryCgroups } from './memory-cgroup.ts'
import { assertJailAvailable, jailFixture } from './test-jail.ts'
import {
  PrestartedLauncher,
  PrestartedLaunchers,
  type LauncherShape,
} from './prestarted-launcher.ts'

const IS_ROOT = process.getuid?.() === 0
const NOBODY = { uid: 65534, gid: 65534 }

/** A launcher whose output is collected from its start (a launcher that ended printed it then). */
interface Watched {
  readonly launcher: PrestartedLauncher
  readonly closed: Promise<number | null>
  stdout: string
  stderr: string
}

function launcher(t: TestContext, shape: LauncherShape, cgroup?: MemoryCgroup): Watched {
  const started = new PrestartedLauncher(shape, cgroup)
  t.after(() => started.discard())
  const watched: Watched = {
    launcher: started,
    closed: new Promise((resolve) => started.child.once('close', (code) => resolve(code))),
    stdout: '',
    stderr: '',
  }
  started.child.stdout?.on('data', (chunk: Buffer) => (watched.stdout += chunk.toString()))
  started.child.stderr?.on('data', (chunk: Buffer) => (watched.stderr += chunk.toString()))
  return watched
}

/** Runs `argv` through the launcher: whether it took it, its exit code and output. */
async function outcome(
  watched: Watched,
  argv: readonly string[],
): Promise<{ code: number | null; stdout: string; stderr: string; ran: boolean }> {
  const [program, ...args] = argv
  const ran = watched.launcher.run(program as string, args)
  watched.launcher.child.stdin?.end()
  const code = await watched.closed
  return { code, stdout: watched.stdout, stderr: watched.stderr, ran }
}

describe('PrestartedLauncher', () => {
  it('runs the argv it is given, with no descriptor but its stdin, stdout and stderr', async (t) => {
    const list = 'ls /proc/$$/fd; echo "$0 $1"'
    const result = await outcome(launcher(t, { namespaces: [], memoryBytes: 0 }), [
      '/bin/sh',
      '-c',
      list,
      'a b',
      'c',
    ])
    assert.equal(result.ran, true)
    assert.equal(result.code, 0, result.stderr)
    // Not the argv's fd 3, not the spawner's, nor any a test runner passes to its children.
    assert.equal(result.stdout, '0\n1\n2\na b c\n')
  })

  it('becomes the jail user with no supplementary groups; without the step it stays root', async (t) => {
    if (!IS_ROOT) {
      // A caller that is not root cannot become another user: the step fails closed.
      const refused = await outcome(
        launcher(t, { namespaces: [], drop: { uid: 0, gid: 0 }, memoryBytes: 0 }),
        ['/usr/bin/id', '-u'],
      )
      assert.equal(refused.code, 125, refused.stderr)
      assert.equal(refused.stdout, '')
      assert.match(refused.stderr, /could not/)
      return
    }
    const dropped = await outcome(launcher(t, { namespaces: [], drop: NOBODY, memoryBytes: 0 }), [
      '/bin/sh',
      '-c',
      'id -u; id -g; id -G; grep -E "^(Cap(Prm|Eff)|Groups)" /proc/self/status',
    ])
    assert.equal(dropped.code, 0, dropped.stderr)
    assert.match(dropped.stdout, /^65534\n65534\n65534\n/)
    assert.match(dropped.stdout, /CapPrm:\t0000000000000000/)
    assert.match(dropped.stdout, /CapEff:\t0000000000000000/)
    assert.match(dropped.stdout, /Groups:\t *\n/)
    // Positive control: the same launcher without the drop step runs as root.
    const kept = await outcome(launcher(t, { namespaces: [], memoryBytes: 0 }), [
      '/usr/bin/id',
      '-u',
    ])
    assert.equal(kept.stdout, '0\n')
  })

  it('enters the namespaces it is given', async (t) => {
    const own = fs.readlinkSync('/proc/self/ns/mnt')
    // Namespaces of its own to enter, as a layer host's: a sleeping process's user namespace
    // (which any caller may make) and the mount namespace it owns.
    const holder = spawn('unshare', [
      '--user',
      '--map-root-user',
      '--mount',
      '--propagation',
      'private',
      'sleep',
      '30',
    ])
    t.after(() => holder.kill('SIGKILL'))
    let other = own
    for (let attempt = 0; attempt < 200 && other === own; attempt++) {
      await new Promise((resolve) => setTimeout(resolve, 10))
      try {
        other = fs.readlinkSync(`/proc/${holder.pid}/ns/mnt`)
      } catch {
        // not there yet
      }
    }
    assert.notEqual(other, own)
    const entered = await outcome(
      launcher(t, {
        namespaces: [
          { type: 'user', path: `/proc/${holder.pid}/ns/user` },
          { type: 'mnt', path: `/proc/${holder.pid}/ns/mnt` },
        ],
        memoryBytes: 0,
      }),
      ['/usr/bin/readlink', '/proc/self/ns/mnt'],
    )
    assert.equal(entered.stdout, `${other}\n`)
    // Positive control: without the step it stays in ours.
    const stayed = await outcome(launcher(t, { namespaces: [], memoryBytes: 0 }), [
      '/usr/bin/readlink',
      '/proc/self/ns/mnt',
    ])
    assert.equal(stayed.stdout, `${own}\n`)
  })

  it('fails closed: a cgroup it cannot join, or a namespace it cannot enter, runs nothing', async (t) => {
    const marker = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'eitri-launcher-')), 'ran')
    t.after(() => fs.rmSync(path.dirname(marker), { recursive: true, force: true }))
    const cases: [LauncherShape, MemoryCgroup | undefined][] = [
      [{ namespaces: [], memoryBytes: 1 }, new MemoryCgroup('/nonexistent/eitri-cgroup', 2)],
      [{ namespaces: [{ type: 'mnt', path: '/etc/hostname' }], memoryBytes: 0 }, undefined],
      [{ namespaces: [{ type: 'mnt', path: '/nonexistent/ns' }], memoryBytes: 0 }, undefined],
    ]
    for (const [shape, cgroup] of cases) {
      const started = launcher(t, shape, cgroup)
      // Give it the time to fail before it is asked.
      await started.closed
      assert.equal(started.launcher.ready, false)
      const result = await outcome(started, ['/usr/bin/touch', marker])
      assert.equal(result.ran, false)
      assert.equal(result.code, 125)
      assert.match(result.stderr, /eitri: the jail could not start/)
      assert.equal(fs.existsSync(marker), false)
    }
    // Positive control: a launcher that can do its steps runs the same command.
    const ok = await outcome(launcher(t, { namespaces: [], memoryBytes: 0 }), [
      '/usr/bin/touch',
      marker,
    ])
    assert.equal(ok.code, 0)
    assert.equal(fs.existsSync(marker), true)
  })

  it('refuses an argument no program can receive', async (t) => {
    const { launcher: started } = launcher(t, { namespaces: [], memoryBytes: 0 })
    assert.equal(started.run('/bin/echo', ['a\0b']), false)
    assert.equal(started.ready, true)
  })

  it('ends without running anything when discarded', async (t) => {
    const { launcher: started, closed } = launcher(t, { namespaces: [], memoryBytes: 0 })
    started.discard()
    await closed
    assert.equal(started.ready, false)
    assert.equal(started.run('/bin/true', []), false)
  })
})

/** True while process `pid` exists and is not a zombie (an orphan the host's init may reap late). */
function running(pid: number): boolean {
  try {
    return fs.readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.[0] !== 'Z'
  } catch {
    return false
  }
}

describe('the launcher spawner', () => {
  it("reports a program's exit code, and the signal that ended it", async (t) => {
    const exited = await outcome(launcher(t, { namespaces: [], memoryBytes: 0 }), [
      '/bin/sh',
      '-c',
      'echo out; echo err >&2; exit 7',
    ])
    assert.deepEqual(exited, { code: 7, stdout: 'out\n', stderr: 'err\n', ran: true })
    const watched = launcher(t, { namespaces: [], memoryBytes: 0 })
    const signalled = new Promise<string | null>((resolve) =>
      watched.launcher.child.once('exit', (_code, signal) => resolve(signal)),
    )
    assert.equal(watched.launcher.run('/bin/sh', ['-c', 'kill -9 $$']), true)
    assert.equal(await signalled, 'SIGKILL')
  })

  it('ends every launcher it forked when it dies; the next launcher gets a new spawner', async (t) => {
    const waiting = launcher(t, { namespaces: [], memoryBytes: 0 })
    await new Promise<void>((resolve) => {
      const check = (): unknown =>
        waiting.launcher.child.pid === undefined ? setTimeout(check, 10) : resolve()
      check()
    })
    const pid = waiting.launcher.child.pid as number
    const spawner = launcherSpawner().pid as number
    process.kill(spawner, 'SIGKILL')
    assert.equal(await waiting.closed, null)
    assert.equal(waiting.launcher.ready, false)
    // Its launcher is gone too, not left waiting as an orphan.
    await new Promise((resolve) => setTimeout(resolve, 200))
    assert.ok(!running(pid), `launcher ${pid} still runs`)
    const next = await outcome(launcher(t, { namespaces: [], memoryBytes: 0 }), ['/bin/true'])
    assert.equal(next.code, 0, next.stderr)
    assert.notEqual(launcherSpawner().pid, spawner)
  })
})

describe('PrestartedLaunchers', () => {
  it('gives the launcher only for the shape it was started for', (t) => {
    const launchers = new PrestartedLaunchers(new MemoryCgroups({ enabled: false }))
    t.after(() => launchers.close())
    const shape: LauncherShape = { namespaces: [], memoryBytes: 1024 }
    launchers.prepare(shape)
    assert.equal(launchers.take({ ...shape, memoryBytes: 2048 }), undefined)
    // The other one was ended: nothing waits now.
    assert.equal(launchers.take(shape), undefined)
    launchers.prepare(shape)
    const taken = launchers.take(shape)
    assert.ok(taken?.ready)
    taken.discard()
    launchers.close()
    launchers.prepare(shape)
    assert.equal(launchers.take(shape), undefined)
  })
})

describe("a jail's cold starts", () => {
  for (const layers of ['overlay', 'mirror'] as const) {
    it(`take a launcher started ahead after the first, confined as before (${layers})`, async (t) => {
      const { jail, workspace } = await jailFixture(t, { 'a.txt': 'a' }, { layers })
      await assertJailAvailable(jail)
      const used: boolean[] = []
      // eslint-disable-next-line @typescript-eslint/unbound-method -- called with its own `this`
      const run = PrestartedLauncher.prototype.run
      t.mock.method(
        PrestartedLauncher.prototype,
        'run',
        function (this: PrestartedLauncher, program: string, args: readonly string[]) {
          const ran = run.call(this, program, args)
          used.push(ran)
          return ran
        },
      )
      const probe = 'id -u; id -G; grep -E "^Cap(Prm|Eff)" /proc/self/status; cat a.txt'
      const outputs: string[] = []
      for (let index = 0; index < 3; index++) {
        const job = await jail.start({
          command: ['/bin/sh', '-c', `${probe}; echo ${index} > out-${index}.txt`],
          access: 'workspace-write',
        })
        const result = await job.finished
        assert.equal(result.exitCode, 0, result.stderr)
        outputs.push(result.stdout)
        // The next one's launcher has started meanwhile; give it the time to be ready.
        await new Promise((resolve) => setTimeout(resolve, 300))
      }
      // Mirror: the first start had none ready; the later ones took one each. Overlay: after
      // the first start the next ones' whole jails start ahead, two waiting (prestarted-jails.ts),
      // each launcher given bubblewrap's argv at once; a jail whose job ended takes the next
      // one (prestarted-jail.ts), so no launcher starts after.
      assert.deepEqual(used, [true, true])
      // The same identity, capabilities, workspace and way back, with or without a launcher.
      const expected = `${IS_ROOT ? '65534\n65534\n' : `${process.getuid?.()}\n`}`
      for (const output of outputs) {
        assert.ok(output.startsWith(expected), output)
        assert.match(output, /CapPrm:\t0000000000000000\nCapEff:\t0000000000000000\na$/)
      }
      assert.equal(outputs[1], outputs[0])
      assert.equal(outputs[2], outputs[0])
      for (let index = 0; index < 3; index++) {
        assert.equal(
          fs.readFileSync(path.join(workspace, `out-${index}.txt`), 'utf8'),
          `${index}\n`,
        )
      }
    })
  }
})
