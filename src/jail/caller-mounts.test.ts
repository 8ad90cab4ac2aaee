import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { describe, it, type TestContext } from 'node:test'
import {
  CallerMounts,
  enteringLaunch,
  mountingLaunch,
  unreachablePart,
} from '../bubblewrap/caller-mounts.ts'
import { jailEnvironment } from '../bubblewrap/jail-environment.ts'
import { UNPRIVILEGED_ID } from '../bubblewrap/jail-identity.ts'
import { DEFAULT_JAIL_LIMITS, type JailSpec } from '../bubblewrap/jail-spec.ts'
import { assertJailAvailable, jailFixture } from './test-jail.ts'

const nobody = { uid: UNPRIVILEGED_ID, gid: UNPRIVILEGED_ID, dropped: true }
const IS_ROOT = process.getuid?.() === 0

/** A fresh folder (0755) that is removed after the test. */
function scratch(t: TestContext): string {
  const folder = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'eitri-caller-mounts-')))
  fs.chmodSync(folder, 0o755)
  t.after(() => fs.rmSync(folder, { recursive: true, force: true }))
  return folder
}

/** `folder/private` (0700, the caller's) holding `pkg/file.txt`, `secret.txt` and `link`. */
function privateTree(t: TestContext): { base: string; closed: string; pkg: string } {
  const base = scratch(t)
  const closed = path.join(base, 'private')
  fs.mkdirSync(path.join(closed, 'pkg'), { recursive: true })
  fs.chmodSync(closed, 0o700)
  fs.writeFileSync(path.join(closed, 'pkg', 'file.txt'), 'inside the package\n', { mode: 0o644 })
  fs.writeFileSync(path.join(closed, 'secret.txt'), 'the caller only\n', { mode: 0o644 })
  fs.symlinkSync(path.join(closed, 'pkg'), path.join(closed, 'link'))
  return { base, closed, pkg: path.join(closed, 'pkg') }
}

function spec(overrides: Partial<JailSpec>): JailSpec {
  return {
    command: ['/bin/true'],
    workspace: '/srv/workspace',
    workspaceAccess: 'read-only',
    overlays: [],
    hiddenFolders: [],
    binds: [],
    environment: jailEnvironment(),
    limits: DEFAULT_JAIL_LIMITS,
    ...overrides,
  }
}

describe('unreachablePart', () => {
  it('is nothing when every folder on the way can be entered', (t) => {
    const base = scratch(t)
    fs.mkdirSync(path.join(base, 'open'), { mode: 0o755 })
    assert.equal(unreachablePart(path.join(base, 'open'), nobody), undefined)
    assert.equal(unreachablePart('/usr/bin/env', nobody), undefined)
  })

  it('is the entry just below the last folder the jail user cannot enter', (t) => {
    const { closed, pkg } = privateTree(t)
    assert.equal(unreachablePart(path.join(pkg, 'file.txt'), nobody), pkg)
    assert.equal(unreachablePart(pkg, nobody), pkg)
    // A closed folder deeper down wins: the part below it is all that needs mounting.
    fs.mkdirSync(path.join(pkg, 'inner'), { mode: 0o700 })
    fs.chmodSync(path.join(pkg, 'inner'), 0o700)
    fs.writeFileSync(path.join(pkg, 'inner', 'deep.txt'), '')
    assert.equal(
      unreachablePart(path.join(pkg, 'inner', 'deep.txt'), nobody),
      path.join(pkg, 'inner', 'deep.txt'),
    )
    // The closed folder itself can be bound: bubblewrap only needs to reach it.
    assert.equal(unreachablePart(closed, nobody), undefined)
  })

  it('counts the owner and group bits for the jail user, and the others bits for anyone else', (t) => {
    const base = scratch(t)
    const folder = path.join(base, 'group-only')
    fs.mkdirSync(folder)
    fs.chmodSync(folder, 0o710)
    fs.writeFileSync(path.join(folder, 'f'), '')
    assert.equal(unreachablePart(path.join(folder, 'f'), nobody), path.join(folder, 'f'))
    const owner = fs.statSync(folder)
    assert.equal(
      unreachablePart(path.join(folder, 'f'), { uid: 4242, gid: owner.gid, dropped: true }),
      undefined,
    )
    assert.equal(
      unreachablePart(path.join(folder, 'f'), { uid: owner.uid, gid: 4242, dropped: true }),
      undefined,
    )
  })

  it('never goes through a link: the caller would follow it with its own rights', (t) => {
    const { closed } = privateTree(t)
    // The link itself is what would have to be mounted: left to bubblewrap, which fails on it.
    assert.equal(unreachablePart(path.join(closed, 'link', 'file.txt'), nobody), undefined)
    assert.equal(unreachablePart(path.join(closed, 'link'), nobody), undefined)
    // A link below the part that is mounted is resolved by bubblewrap, as the jail user.
    const outer = path.join(closed, 'pkg')
    fs.symlinkSync('/etc', path.join(outer, 'etc-link'))
    assert.equal(unreachablePart(path.join(outer, 'etc-link', 'passwd'), nobody), outer)
  })

  it('is nothing for a path that does not exist (bubblewrap reports it)', (t) => {
    const { closed } = privateTree(t)
    assert.equal(unreachablePart(path.join(closed, 'missing', 'x'), nobody), undefined)
  })
})

describe('CallerMounts.plan', () => {
  it('leaves the spec alone for a caller whose jail runs as itself', (t) => {
    const { pkg } = privateTree(t)
    const given = spec({ binds: [{ source: pkg, target: '/opt/pkg', writable: false }] })
    const planned = new CallerMounts({ uid: 1000, gid: 1000, dropped: false }).plan(given)
    assert.equal(planned.spec, given)
    assert.deepEqual(planned.mounts, [])
  })

  it('mounts each unreachable part once, writable only when a writable bind goes through it', (t) => {
    const { base, pkg } = privateTree(t)
    const mounts = new CallerMounts(nobody, [base])
    t.after(() => mounts.close())
    const planned = mounts.plan(
      spec({
        workspace: pkg,
        workspaceAccess: 'read-write',
        overlays: [
          { source: path.join(pkg, 'file.txt'), target: '/workspace/file.txt', writable: false },
        ],
        binds: [
          { source: '/usr/share', target: '/opt/share', writable: false },
          { source: path.join(pkg, 'file.txt'), target: '/opt/file.txt', writable: false },
        ],
      }),
    )
    assert.equal(planned.mounts.length, 1)
    const [mount] = planned.mounts
    assert.ok(mount !== undefined)
    assert.equal(mount.source, pkg)
    assert.equal(mount.writable, true)
    assert.equal(path.dirname(path.dirname(mount.mountPoint)), base)
    assert.ok(fs.statSync(mount.mountPoint).isDirectory())
    // The jail's user may pass through the folder, not list it, and cannot guess a name in it.
    assert.equal(fs.statSync(path.dirname(mount.mountPoint)).mode & 0o777, 0o711)
    assert.match(path.basename(mount.mountPoint), /^[0-9a-f]{24}$/)
    assert.equal(unreachablePart(mount.mountPoint, nobody), undefined)
    assert.equal(planned.spec.workspace, mount.mountPoint)
    assert.equal(planned.spec.overlays[0]?.source, path.join(mount.mountPoint, 'file.txt'))
    assert.equal(planned.spec.binds[0]?.source, '/usr/share')
    assert.equal(planned.spec.binds[1]?.source, path.join(mount.mountPoint, 'file.txt'))

    const readOnly = mounts.plan(
      spec({ binds: [{ source: path.join(pkg, 'file.txt'), target: '/opt/f', writable: false }] }),
    )
    assert.deepEqual(readOnly.mounts, [{ ...mount, writable: false }])
  })

  it('makes a file mount point for a file', (t) => {
    const { base, closed } = privateTree(t)
    const mounts = new CallerMounts(nobody, [base])
    t.after(() => mounts.close())
    const file = path.join(closed, 'secret.txt')
    const planned = mounts.plan(spec({ binds: [{ source: file, target: '/s', writable: false }] }))
    assert.equal(planned.mounts[0]?.source, file)
    assert.ok(fs.statSync(planned.mounts[0]?.mountPoint ?? '').isFile())
  })

  it('puts its mount points in the first folder the jail user can reach, or refuses with the fix', (t) => {
    const { base, closed, pkg } = privateTree(t)
    const mounts = new CallerMounts(nobody, [closed, path.join(base, 'missing'), base])
    t.after(() => mounts.close())
    const planned = mounts.plan(spec({ binds: [{ source: pkg, target: '/p', writable: false }] }))
    assert.equal(path.dirname(path.dirname(planned.mounts[0]?.mountPoint ?? '')), base)
    assert.deepEqual(fs.readdirSync(closed).sort(), ['link', 'pkg', 'secret.txt'])

    const nowhere = new CallerMounts(nobody, [closed])
    assert.throws(
      () => nowhere.plan(spec({ binds: [{ source: pkg, target: '/p', writable: false }] })),
      (error: Error & { code?: string }) =>
        error.code === 'jail_unavailable' &&
        /set TMPDIR to a folder every user can enter/.test(error.message),
    )
  })

  it('removes its mount points without ever emptying one', (t) => {
    const { base, pkg } = privateTree(t)
    const mounts = new CallerMounts(nobody, [base])
    const planned = mounts.plan(spec({ binds: [{ source: pkg, target: '/p', writable: false }] }))
    const point = planned.mounts[0]?.mountPoint ?? ''
    const folder = path.dirname(point)
    // Stands in for a mount still in place: what is inside must survive the removal.
    fs.writeFileSync(path.join(point, 'still-mounted.txt'), 'keep')
    mounts.close()
    assert.equal(fs.readFileSync(path.join(point, 'still-mounted.txt'), 'utf8'), 'keep')
    fs.rmSync(path.join(point, 'still-mounted.txt'))
    const again = new CallerMounts(nobody, [base])
    again.plan(spec({ binds: [{ source: pkg, target: '/p', writable: false }] }))
    again.close()
    assert.deepEqual(
      fs.readdirSync(base).filter((name) => name.startsWith('eitri-mounts-')),
      [path.basename(folder)],
    )
  })
})

describe('mountingLaunch', () => {
  it('mounts in a private namespace, then drops to the jail user before bubblewrap starts', () => {
    const launch = mountingLaunch('bwrap', ['--unshare-all', '--', '/bin/true'], nobody, [
      { source: '/root/pkg', mountPoint: '/tmp/m/0', writable: false },
      { source: '/root/tmp/mirror', mountPoint: '/tmp/m/1', writable: true },
    ])
    assert.equal(launch.command, 'unshare')
    assert.deepEqual(launch.args.slice(0, 4), ['--mount', '--propagation', 'private', '--'])
    const script = launch.args.indexOf('eitri-jail-mounts')
    assert.deepEqual(launch.args.slice(4, 6), ['/bin/sh', '-c'])
    assert.doesNotMatch(launch.args[6] ?? '', /\/root|\/tmp/, 'paths are arguments, never code')
    assert.deepEqual(launch.args.slice(script + 1), [
      '/root/pkg',
      '/tmp/m/0',
      'ro',
      '/root/tmp/mirror',
      '/tmp/m/1',
      'rw',
      '--',
      'setpriv',
      '--reuid=65534',
      '--regid=65534',
      '--clear-groups',
      '--',
      'bwrap',
      '--unshare-all',
      '--',
      '/bin/true',
    ])
  })
})

describe('enteringLaunch', () => {
  const enter = ['nsenter', '--mount=/proc/42/ns/mnt', '--']
  it("drops a root caller to the jail's user in nsenter itself: group (and no supplementary groups), then user", () => {
    assert.deepEqual(enteringLaunch(enter, 'bwrap', ['--', '/bin/true'], nobody), {
      command: 'nsenter',
      args: [
        '--mount=/proc/42/ns/mnt',
        '--setgid=65534',
        '--setuid=65534',
        '--',
        'bwrap',
        '--',
        '/bin/true',
      ],
    })
  })
  it('drops nothing for a caller whose jail runs as itself, and uses setpriv after any other step', () => {
    const self = { ...nobody, dropped: false }
    assert.deepEqual(enteringLaunch(enter, 'bwrap', [], self).args, [
      '--mount=/proc/42/ns/mnt',
      '--',
      'bwrap',
    ])
    assert.deepEqual(enteringLaunch(['other', '--'], 'bwrap', [], nobody).args, [
      '--',
      'setpriv',
      '--reuid=65534',
      '--regid=65534',
      '--clear-groups',
      '--',
      'bwrap',
    ])
  })
  it("a jailed program has the jail's user and group, real and effective, and no supplementary group", async (t) => {
    const { jail } = await jailFixture(t, {}, { layers: 'overlay' })
    await assertJailAvailable(jail)
    const job = (): Promise<{ exitCode: number | null; stdout: string; stderr: string }> =>
      jail
        .start({
          command: ['/bin/sh', '-c', "grep -E '^(Uid|Gid|Groups):' /proc/self/status"],
          access: 'workspace-write',
        })
        .then((started) => started.finished)
    if (process.getuid?.() !== 0) {
      // A caller that is not root runs its jail as itself: its own ids, nothing added.
      const uid = String(process.getuid?.())
      const gid = String(process.getgid?.())
      const result = await job()
      assert.equal(result.exitCode, 0, result.stderr)
      assert.match(result.stdout, new RegExp(`^Uid:\\s+${uid}\\s+${uid}\\s+${uid}\\s+${uid}$`, 'm'))
      assert.match(result.stdout, new RegExp(`^Gid:\\s+${gid}\\s+${gid}\\s+${gid}\\s+${gid}$`, 'm'))
      return
    }
    // The caller gets a supplementary group (adm), which the jail's user must not keep.
    process.setgroups?.([4])
    t.after(() => process.setgroups?.([]))
    // The control: nsenter setting the user alone keeps the caller's groups.
    const kept = spawnSync(
      'nsenter',
      [
        `--mount=/proc/${process.pid}/ns/mnt`,
        '--setuid=65534',
        '--',
        'grep',
        'Groups:',
        '/proc/self/status',
      ],
      { encoding: 'utf8' },
    )
    assert.match(kept.stdout, /^Groups:\s+4\s*$/m, `the control kept no group: ${kept.stderr}`)
    // A background job: the cold path, started through the layer host's nsenter.
    const result = await job()
    assert.equal(result.exitCode, 0, result.stderr)
    assert.match(result.stdout, /^Uid:\s+65534\s+65534\s+65534\s+65534$/m)
    assert.match(result.stdout, /^Gid:\s+65534\s+65534\s+65534\s+65534$/m)
    assert.match(result.stdout, /^Groups:\s*$/m)
  })
})

describe('a jail whose sources its user cannot reach', () => {
  it('shows a bind from a 0700 folder, and nothing else of that folder', async (t) => {
    const { jail } = await jailFixture(t)
    await assertJailAvailable(jail)
    const { closed, pkg } = privateTree(t)
    if (jail.identity.dropped) {
      // The control: the jail's user cannot read the file itself.
      const direct = spawnSync('/bin/cat', [path.join(pkg, 'file.txt')], {
        uid: UNPRIVILEGED_ID,
        gid: UNPRIVILEGED_ID,
        encoding: 'utf8',
      })
      assert.notEqual(direct.status, 0)
      assert.match(direct.stderr, /Permission denied/)
    }
    const result = await jail.run({
      command: [
        '/bin/bash',
        '-c',
        `cat /opt/pkg/file.txt; ls -A /opt/pkg; ls ${closed} 2>&1; cat /opt/pkg/../secret.txt 2>&1; grep -c eitri-mounts /proc/self/mountinfo; touch /opt/pkg/new 2>&1; id -u`,
      ],
      access: 'read-only',
      binds: [{ source: pkg, target: '/opt/pkg', writable: false }],
    })
    assert.equal(result.exitCode, 0, result.stderr)
    const lines = result.stdout.trim().split('\n')
    assert.equal(lines[0], 'inside the package')
    assert.equal(lines[1], 'file.txt')
    assert.match(lines[2] ?? '', /No such file or directory/)
    assert.match(lines[3] ?? '', /No such file or directory/)
    // Where the caller mounted it is no path the program can see.
    assert.equal(lines[4], '0')
    assert.match(lines[5] ?? '', /Read-only file system/)
    assert.notEqual(lines[6], '0')
  })

  it('leaves the host mount table alone while and after a job runs with such a bind', async (t) => {
    const { jail } = await jailFixture(t)
    await assertJailAvailable(jail)
    const { pkg } = privateTree(t)
    const job = await jail.start({
      command: ['/bin/bash', '-c', 'cat /opt/pkg/file.txt; sleep 30'],
      access: 'read-only',
      binds: [{ source: pkg, target: '/opt/pkg', writable: false }],
    })
    const deadline = Date.now() + 10_000
    while (!job.process.stdout.text().includes('inside') && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
    assert.match(job.process.stdout.text(), /inside the package/)
    const mountTable = (): string => fs.readFileSync('/proc/self/mountinfo', 'utf8')
    assert.doesNotMatch(mountTable(), /eitri-mounts-/)
    job.process.kill()
    await job.finished
    assert.doesNotMatch(mountTable(), /eitri-mounts-/)
  })

  it('never follows a link on the way with the caller’s rights', async (t) => {
    const { jail } = await jailFixture(t)
    await assertJailAvailable(jail)
    const { closed } = privateTree(t)
    const run = (source: string) =>
      jail.run({
        command: ['/bin/cat', '/opt/file.txt'],
        access: 'read-only',
        binds: [{ source, target: '/opt/file.txt', writable: false }],
      })
    // The control: the same file without the link is shown.
    const direct = await run(path.join(closed, 'pkg', 'file.txt'))
    assert.equal(direct.stdout, 'inside the package\n', direct.stderr)
    const linked = await run(path.join(closed, 'link', 'file.txt'))
    if (jail.identity.dropped) {
      assert.notEqual(linked.exitCode, 0)
      assert.match(linked.stderr, /Permission denied/)
      assert.equal(linked.stdout, '')
    } else {
      // A caller whose jail runs as itself may follow its own link.
      assert.equal(linked.stdout, 'inside the package\n', linked.stderr)
    }
  })

  it('a link climbing out of a mounted folder reaches only a folder it cannot list', async (t) => {
    const { jail } = await jailFixture(t)
    await assertJailAvailable(jail)
    const { closed, pkg } = privateTree(t)
    // A folder a program could write, holding its link up and out of the mount.
    const writable = path.join(closed, 'writable')
    fs.mkdirSync(writable, { mode: 0o755 })
    fs.symlinkSync('..', path.join(writable, 'up'))
    const result = await jail.run({
      command: [
        '/bin/bash',
        '-c',
        'cat /opt/pkg/file.txt; test -d /opt/up && echo climbed; ls /opt/up 2>&1; ls -A /opt/up | wc -l',
      ],
      access: 'read-only',
      binds: [
        { source: pkg, target: '/opt/pkg', writable: false },
        { source: path.join(writable, 'up'), target: '/opt/up', writable: false },
      ],
    })
    const lines = result.stdout.trim().split('\n')
    assert.equal(lines[0], 'inside the package', result.stderr)
    assert.equal(lines[1], 'climbed')
    if (jail.identity.dropped) {
      // It climbed to the caller's folder of mount points: passable, not listable.
      assert.match(lines[2] ?? '', /Permission denied/)
      assert.equal(lines[3], '0')
    } else {
      // A caller whose jail runs as itself climbs to its own folder, which it may list.
      assert.match(result.stdout, /pkg/)
    }
  })

  it('works on a mirror and placeholders in a 0700 temporary folder, protected paths still read-only', async (t) => {
    const { base } = privateTree(t)
    const temporaryRoot = path.join(base, 'private-tmp')
    fs.mkdirSync(temporaryRoot, { mode: 0o700 })
    fs.chmodSync(temporaryRoot, 0o700)
    const { jail, workspace } = await jailFixture(
      t,
      { 'a.txt': 'one\n', '.git/config': '' },
      { temporaryRoot, layers: 'mirror' },
    )
    await assertJailAvailable(jail)
    const result = await jail.run({
      command: [
        '/bin/bash',
        '-c',
        'cat a.txt; echo two > b.txt; echo x > .git/config; echo x > .envrc; true',
      ],
      access: 'workspace-write',
    })
    assert.equal(result.exitCode, 0, result.stderr)
    assert.equal(result.stdout, 'one\n')
    assert.match(result.stderr, /\.git\/config: Read-only file system/)
    assert.match(result.stderr, /\.envrc: Read-only file system/)
    assert.equal(fs.readFileSync(path.join(workspace, 'b.txt'), 'utf8'), 'two\n')
    assert.equal(fs.readFileSync(path.join(workspace, '.git/config'), 'utf8'), '')
    if (IS_ROOT) assert.ok(jail.identity.dropped)
  })

  it('works on overlays in a 0700 temporary folder, protected paths refused on the way back', async (t) => {
    const { base } = privateTree(t)
    const temporaryRoot = path.join(base, 'private-tmp')
    fs.mkdirSync(temporaryRoot, { mode: 0o700 })
    fs.chmodSync(temporaryRoot, 0o700)
    const { jail, workspace } = await jailFixture(
      t,
      { 'a.txt': 'one\n', '.git/config': '' },
      { temporaryRoot },
    )
    await assertJailAvailable(jail)
    const script = 'cat a.txt; echo two > b.txt; echo x > .git/config; echo x > .envrc; true'
    // Twice: the first command starts the warm jail, the second gets its overlay by propagation.
    for (const round of [1, 2]) {
      const result = await jail.run({
        command: ['/bin/bash', '-c', script],
        access: 'workspace-write',
      })
      assert.equal(result.exitCode, 0, result.stderr)
      assert.equal(result.stdout, round === 1 ? 'one\n' : 'one\n', `round ${round}`)
      assert.deepEqual(result.sync?.refused.map((refusal) => refusal.path).sort(), [
        '.envrc',
        '.git/config',
      ])
      assert.equal(fs.readFileSync(path.join(workspace, 'b.txt'), 'utf8'), 'two\n')
      assert.equal(fs.readFileSync(path.join(workspace, '.git/config'), 'utf8'), '')
      assert.equal(fs.existsSync(path.join(workspace, '.envrc')), false)
    }
    if (IS_ROOT) assert.equal(jail.layers.mode, 'overlay')
  })
})
