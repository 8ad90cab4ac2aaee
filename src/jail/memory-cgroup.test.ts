import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { describe, it, type TestContext } from 'node:test'
import { findOwnMemoryCgroup, MemoryCgroups } from './memory-cgroup.ts'

function files(t: TestContext, selfCgroup: string, mountInfo: string) {
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'eitri-cgroup-test-'))
  t.after(() => fs.rmSync(folder, { recursive: true, force: true }))
  fs.writeFileSync(path.join(folder, 'cgroup'), selfCgroup)
  fs.writeFileSync(path.join(folder, 'mountinfo'), mountInfo)
  return {
    folder,
    files: { selfCgroup: path.join(folder, 'cgroup'), mountInfo: path.join(folder, 'mountinfo') },
  }
}

const HYBRID_MOUNTS = [
  '31 30 0:28 / /sys/fs/cgroup/cpu rw,relatime - cgroup cgroup rw,cpu',
  '34 30 0:31 / /sys/fs/cgroup/memory rw,relatime - cgroup cgroup rw,memory',
  '40 30 0:37 / /sys/fs/cgroup/unified rw,relatime - cgroup2 cgroup2 rw',
].join('\n')

describe('findOwnMemoryCgroup', () => {
  it('finds the v1 memory controller of a hybrid system, below its mount', (t) => {
    const { files: paths } = files(
      t,
      '9:name=systemd:/\n4:memory:/process_api/abc\n1:cpu:/\n0::/\n',
      HYBRID_MOUNTS,
    )
    assert.deepEqual(findOwnMemoryCgroup(paths), {
      version: 1,
      parent: '/sys/fs/cgroup/memory/process_api/abc',
    })
  })

  it('maps a container whose mount root is its own cgroup', (t) => {
    const { files: paths } = files(
      t,
      '5:memory,blkio:/docker/c1/sub\n',
      '34 30 0:31 /docker/c1 /sys/fs/cgroup/memory rw - cgroup cgroup rw,memory,blkio',
    )
    assert.deepEqual(findOwnMemoryCgroup(paths), {
      version: 1,
      parent: '/sys/fs/cgroup/memory/sub',
    })
  })

  it('uses cgroup v2 only where the memory controller is delegated to it', (t) => {
    const { folder, files: paths } = files(t, '0::/user.slice/eitri\n', '')
    const root = path.join(folder, 'unified')
    fs.mkdirSync(path.join(root, 'user.slice/eitri'), { recursive: true })
    fs.writeFileSync(path.join(paths.mountInfo), `40 30 0:37 / ${root} rw - cgroup2 cgroup2 rw\n`)
    fs.writeFileSync(path.join(root, 'user.slice/eitri/cgroup.controllers'), 'cpu io pids\n')
    assert.match(
      (findOwnMemoryCgroup(paths) as { reason: string }).reason,
      /memory controller is not delegated/,
    )
    fs.writeFileSync(path.join(root, 'user.slice/eitri/cgroup.controllers'), 'cpu memory pids\n')
    assert.deepEqual(findOwnMemoryCgroup(paths), {
      version: 2,
      parent: path.join(root, 'user.slice/eitri'),
    })
  })

  it('answers why not when there is no memory cgroup', (t) => {
    const { files: paths } = files(t, '1:cpu:/\n', HYBRID_MOUNTS)
    assert.ok('reason' in findOwnMemoryCgroup(paths))
  })
})

describe('MemoryCgroups', () => {
  it('falls back to RLIMIT_DATA, with the reason, where no cgroup can be made', (t) => {
    // A memory hierarchy mounted where nothing can be created: the probe fails, and says why.
    const { folder, files: paths } = files(t, '4:memory:/\n', '')
    const missing = path.join(folder, 'no-such-mount')
    fs.writeFileSync(paths.mountInfo, `34 30 0:31 / ${missing} rw - cgroup cgroup rw,memory\n`)
    const cgroups = new MemoryCgroups({ files: paths })
    const support = cgroups.support()
    assert.equal(support.bound, 'rlimit-data')
    assert.match(support.bound === 'rlimit-data' ? support.reason : '', /no memory cgroup can be/)
    assert.equal(cgroups.create(2 ** 30), undefined)
  })

  it('bounds by RLIMIT_DATA alone when turned off', () => {
    const cgroups = new MemoryCgroups({ enabled: false })
    assert.equal(cgroups.support().bound, 'rlimit-data')
    assert.equal(cgroups.create(2 ** 30), undefined)
  })
})

describe('MemoryCgroups, probed once a process', () => {
  it("shares a successful probe with the process's next jails: no probe cgroup of their own", async (t) => {
    // A v1 memory hierarchy in a plain folder: making a cgroup and joining it (writing 0 to
    // its cgroup.procs) succeed there, and a probe cgroup, never empty, stays behind to count.
    const { folder, files: paths } = files(t, '4:memory:/\n', '')
    const hierarchy = path.join(folder, 'memory')
    fs.mkdirSync(hierarchy)
    fs.writeFileSync(paths.mountInfo, `34 30 0:31 / ${hierarchy} rw - cgroup cgroup rw,memory\n`)
    const probes = () => fs.readdirSync(hierarchy).filter((name) => name.includes('-probe-'))
    const first = await new MemoryCgroups({ files: paths }).prepare()
    assert.deepEqual(first, { bound: 'cgroup', version: 1, parent: hierarchy })
    assert.equal(probes().length, 1)
    const second = new MemoryCgroups({ files: paths })
    assert.deepEqual(await second.prepare(), first)
    assert.deepEqual(second.support(), first)
    assert.equal(probes().length, 1, 'the second jail probed again')
  })

  it('probes again after a failure', (t) => {
    const { folder, files: paths } = files(t, '4:memory:/\n', '')
    const hierarchy = path.join(folder, 'memory')
    fs.writeFileSync(paths.mountInfo, `34 30 0:31 / ${hierarchy} rw - cgroup cgroup rw,memory\n`)
    // Not there yet: no cgroup can be made.
    assert.equal(new MemoryCgroups({ files: paths }).support().bound, 'rlimit-data')
    fs.mkdirSync(hierarchy)
    assert.equal(new MemoryCgroups({ files: paths }).support().bound, 'cgroup')
  })
})
