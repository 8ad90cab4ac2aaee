import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { buildBwrapArgs, ETC_ALLOWLIST, limitWords, PRLIMIT } from './bwrap-args.ts'
import { jailEnvironment } from './jail-environment.ts'
import { DEFAULT_JAIL_LIMITS, JAIL_HOME, type JailSpec } from './jail-spec.ts'

const spec: JailSpec = {
  command: ['/bin/bash', '-c', 'echo hi'],
  workspace: '/srv/ws',
  workspaceAccess: 'read-write',
  overlays: [
    { source: '/srv/ws/.git', target: '/workspace/.git', writable: true },
    { source: '/srv/ws/.git/hooks', target: '/workspace/.git/hooks', writable: false },
  ],
  hiddenFolders: ['/workspace/.eitri'],
  binds: [{ source: '/tmp/scratch', target: '/scratch', writable: true }],
  environment: { PATH: '/usr/bin', HOME: '/tmp' },
  limits: DEFAULT_JAIL_LIMITS,
}

/** The argv as [flag, ...operands] groups, for assertions entry by entry. */
function groups(args: readonly string[]): string[][] {
  const arity: Record<string, number> = {
    '--unshare-all': 0,
    '--unshare-user': 0,
    '--disable-userns': 0,
    '--new-session': 0,
    '--die-with-parent': 0,
    '--as-pid-1': 0,
    '--clearenv': 0,
    '--cap-drop': 1,
    '--proc': 1,
    '--dev': 1,
    '--tmpfs': 1,
    '--mqueue': 1,
    '--remount-ro': 1,
    '--chdir': 1,
    '--size': 1,
    '--perms': 1,
    '--dir': 1,
    '--setenv': 2,
    '--ro-bind': 2,
    '--ro-bind-try': 2,
    '--bind': 2,
    '--symlink': 2,
  }
  const result: string[][] = []
  let index = 0
  while (index < args.length) {
    const flag = args[index] as string
    if (flag === '--') {
      result.push(args.slice(index))
      break
    }
    const count = arity[flag]
    assert.ok(count !== undefined, `unexpected flag ${flag}`)
    result.push(args.slice(index, index + 1 + count))
    index += 1 + count
  }
  return result
}

describe('buildBwrapArgs', () => {
  const args = buildBwrapArgs(spec)
  const parts = groups(args)

  it('starts with the namespace, capability, session and environment hardening, in order', () => {
    assert.deepEqual(parts.slice(0, 8), [
      ['--unshare-all'],
      ['--unshare-user'],
      ['--disable-userns'],
      ['--cap-drop', 'ALL'],
      ['--new-session'],
      ['--die-with-parent'],
      ['--clearenv'],
      ['--setenv', 'PATH', '/usr/bin'],
    ])
    assert.deepEqual(parts[8], ['--setenv', 'HOME', '/tmp'])
  })

  it('makes the command PID 1 only when asked (the reaper of a warm jail), after --die-with-parent', () => {
    assert.ok(!args.includes('--as-pid-1'))
    const reaping = groups(buildBwrapArgs({ ...spec, asPidOne: true }))
    assert.deepEqual(reaping.slice(5, 7), [['--die-with-parent'], ['--as-pid-1']])
  })

  it('mounts a minimal read-only system, never the host root or /etc wholesale', () => {
    assert.ok(parts.some((part) => part.join(' ') === '--ro-bind /usr /usr'))
    for (const link of ['/bin', '/sbin', '/lib', '/lib64']) {
      assert.ok(
        parts.some((part) => part[0] === '--symlink' && part[2] === link),
        link,
      )
    }
    const etc = parts.filter((part) => part[0] === '--ro-bind-try').map((part) => part[1])
    assert.deepEqual(etc, [...ETC_ALLOWLIST])
    assert.ok(!etc.includes('/etc/shadow') && !etc.includes('/etc/sudoers'))
    assert.ok(
      !parts.some(
        (part) =>
          part[0] !== '--remount-ro' &&
          (part[1] === '/' || part[1] === '/etc' || part[1] === '/root' || part[1] === '/home'),
      ),
    )
  })

  it('gives /proc, /dev and a size-capped /tmp', () => {
    const flat = parts.map((part) => part.join(' '))
    assert.ok(flat.includes('--proc /proc'))
    // Its settings of the jail's namespaces are read-only (jail-attack-classes §34).
    assert.equal(flat[flat.indexOf('--proc /proc') + 1], '--ro-bind /proc/sys /proc/sys')
    assert.ok(flat.includes('--dev /dev'))
    const size = flat.indexOf(`--size ${DEFAULT_JAIL_LIMITS.tmpBytes}`)
    assert.ok(size >= 0 && flat[size + 1] === '--tmpfs /tmp', 'the size applies to /tmp')
    assert.equal(flat[size + 2], `--size ${DEFAULT_JAIL_LIMITS.tmpBytes}`)
    assert.equal(flat[size + 3], '--tmpfs /dev/shm', 'and to /dev/shm')
    assert.equal(flat[size + 4], '--mqueue /dev/mqueue', 'POSIX message queues, listed')
  })

  it('gives the home as an empty folder of the root, made read-only with it (decision 0064)', () => {
    const flat = parts.map((part) => part.join(' '))
    const home = flat.indexOf(`--dir ${JAIL_HOME}`)
    assert.ok(home > 0, flat.join('\n'))
    assert.equal(flat[home - 1], '--perms 0555')
    assert.ok(home < flat.indexOf('--remount-ro /'))
    assert.ok(!flat.some((part) => part.endsWith(` ${JAIL_HOME}`) && !part.startsWith('--dir')))
    assert.equal(jailEnvironment()['HOME'], JAIL_HOME)
  })

  it('makes the root and /dev read-only once every mount point exists', () => {
    const flat = parts.map((part) => part.join(' '))
    const chdir = flat.indexOf('--chdir /workspace')
    assert.deepEqual(flat.slice(chdir - 2, chdir), ['--remount-ro /dev', '--remount-ro /'])
  })

  it('binds the workspace at /workspace, then the overlays in order, then hidden folders and binds', () => {
    const flat = parts.map((part) => part.join(' '))
    const workspace = flat.indexOf('--bind /srv/ws /workspace')
    assert.ok(workspace > 0)
    assert.deepEqual(flat.slice(workspace + 1, workspace + 6), [
      '--bind /srv/ws/.git /workspace/.git',
      '--ro-bind /srv/ws/.git/hooks /workspace/.git/hooks',
      '--tmpfs /workspace/.eitri',
      '--remount-ro /workspace/.eitri',
      '--bind /tmp/scratch /scratch',
    ])
    assert.equal(flat[workspace + 8], '--chdir /workspace')
  })

  it('mounts the workspace read-only for read-only access', () => {
    const flat = groups(buildBwrapArgs({ ...spec, workspaceAccess: 'read-only' })).map((part) =>
      part.join(' '),
    )
    assert.ok(flat.includes('--ro-bind /srv/ws /workspace'))
    assert.ok(!flat.includes('--bind /srv/ws /workspace'))
  })

  it('ends with -- and the command under prlimit, its limits binding inside the jail', () => {
    assert.deepEqual(parts.at(-1), [
      '--',
      PRLIMIT,
      `--nproc=${DEFAULT_JAIL_LIMITS.processes}`,
      `--data=${DEFAULT_JAIL_LIMITS.memoryBytes}`,
      `--fsize=${DEFAULT_JAIL_LIMITS.fileSizeBytes}`,
      '--',
      '/bin/bash',
      '-c',
      'echo hi',
    ])
  })

  it('leaves the limits to a command that sets them itself (limitsBy: command)', () => {
    assert.deepEqual(groups(buildBwrapArgs(spec, { limitsBy: 'command' })).at(-1), [
      '--',
      '/bin/bash',
      '-c',
      'echo hi',
    ])
    assert.deepEqual(limitWords(spec), [
      `--nproc=${DEFAULT_JAIL_LIMITS.processes}`,
      `--data=${DEFAULT_JAIL_LIMITS.memoryBytes}`,
      `--fsize=${DEFAULT_JAIL_LIMITS.fileSizeBytes}`,
    ])
  })

  it('never limits address space, and leaves memory to the cgroup when there is one', () => {
    const flat = buildBwrapArgs(spec).join(' ')
    assert.doesNotMatch(flat, /--as=/)
    const inCgroup = groups(buildBwrapArgs({ ...spec, memoryInCgroup: true })).at(-1) ?? []
    assert.ok(!inCgroup.some((part) => part.startsWith('--data=') || part.startsWith('--as=')))
    assert.ok(inCgroup.includes(`--nproc=${DEFAULT_JAIL_LIMITS.processes}`))
  })

  it('keeps hostile paths as single operands (no argument injection)', () => {
    const hostile = buildBwrapArgs({ ...spec, workspace: '--bind / /evil\n', command: ['--help'] })
    const flat = groups(hostile).map((part) => part.join('\u0000'))
    assert.ok(flat.includes('--bind\u0000--bind / /evil\n\u0000/workspace'))
    assert.deepEqual(groups(hostile).at(-1)?.slice(-2), ['--', '--help'])
  })

  it('puts no host environment into argv: only what the spec lists', () => {
    const setenv = parts.filter((part) => part[0] === '--setenv').map((part) => part[1])
    assert.deepEqual(setenv, ['PATH', 'HOME'])
    const base = Object.keys(jailEnvironment())
    assert.ok(
      !base.some((name) => /TOKEN|SECRET|KEY$|PASSWORD|AWS_|GITHUB/.test(name)),
      base.join(','),
    )
  })
})
