/**
 * @module bubblewrap/bwrap-args
 * bubblewrap's argv, built as an array and never through a shell. Each flag carries the reason
 * it is there; docs/jail-attack-classes.md numbers the attacks.
 */
import { JAIL_HOME, JAIL_WORKSPACE, type JailSpec } from './jail-spec.ts'

/**
 * Files of `/etc` a program needs (names, resolver, loader, alternatives, the JDK's own
 * settings); never shadow or keys. Debian and Ubuntu keep an OpenJDK's `conf` files
 * (`security/java.security`, policies, logging) in `/etc/java-N-openjdk`, linked from
 * `/usr/lib/jvm`, and no `java` starts without them; Fedora keeps `/etc/java`. Maven's
 * `/etc/maven` stays out: its `settings.xml` may hold a repository's password.
 */
export const ETC_ALLOWLIST: readonly string[] = [
  '/etc/alternatives',
  '/etc/bash.bashrc',
  '/etc/group',
  '/etc/hostname',
  '/etc/hosts',
  '/etc/inputrc',
  '/etc/java',
  '/etc/java-8-openjdk',
  '/etc/java-11-openjdk',
  '/etc/java-17-openjdk',
  '/etc/java-21-openjdk',
  '/etc/java-25-openjdk',
  '/etc/ld.so.cache',
  '/etc/ld.so.conf',
  '/etc/ld.so.conf.d',
  '/etc/localtime',
  '/etc/mime.types',
  '/etc/nsswitch.conf',
  '/etc/passwd',
  '/etc/profile',
  '/etc/protocols',
  '/etc/services',
  '/etc/ssl/certs',
  '/etc/timezone',
]

/** Top-level links of a usr-merged system, recreated inside the jail. */
const USR_MERGED_LINKS: readonly (readonly [string, string])[] = [
  ['usr/bin', '/bin'],
  ['usr/sbin', '/sbin'],
  ['usr/lib', '/lib'],
  ['usr/lib64', '/lib64'],
]

/**
 * A minimal read-only system: /usr (with the links of a usr-merged system) and the short list
 * from /etc, not the host's root. Shared by the jail and the code sandbox's process.
 */
export function readOnlySystemArgs(): string[] {
  const args = ['--ro-bind', '/usr', '/usr']
  for (const [target, link] of USR_MERGED_LINKS) args.push('--symlink', target, link)
  for (const path of ETC_ALLOWLIST) args.push('--ro-bind-try', path, path)
  return args
}

/**
 * A /proc of the jail's own PID namespace, with /proc/sys read-only. bubblewrap covers
 * /proc/sys only where its user may write the folder, which it never may here; yet the jail's
 * user is root of the user namespace that owns the jail's IPC and PID namespaces, so it could
 * set their settings (`kernel/pid_max`, `kernel/msgmni`, `kernel/shmmax`, `kernel/sem`,
 * `fs/mqueue/*`), and in a jail that runs one command after another (a warm jail, a jail
 * started ahead: decision 0042) what one command set bound the next (jail-attack-classes §34).
 * The values read are still the jail's own namespaces'.
 */
export function procArgs(): string[] {
  return ['--proc', '/proc', '--ro-bind', '/proc/sys', '/proc/sys']
}

/** The program that applies resource limits inside the jail before running the command. */
export const PRLIMIT = '/usr/bin/prlimit'

/**
 * The limits that bind inside the jail, as `prlimit` options (`--nproc=N`, `--data=N` where no
 * memory cgroup bounds memory, `--fsize=N`).
 */
export function limitWords(spec: JailSpec): string[] {
  return [
    `--nproc=${spec.limits.processes}`,
    ...(spec.memoryInCgroup === true ? [] : [`--data=${spec.limits.memoryBytes}`]),
    `--fsize=${spec.limits.fileSizeBytes}`,
  ]
}

/**
 * Builds bubblewrap's arguments for `spec`. Pure: the same spec gives the same argv, which the
 * unit tests check entry by entry. `limitsBy: 'command'`: the command sets the limits of
 * {@link limitWords} itself before it runs anything else (a jail started ahead's waiter), so no
 * `prlimit` runs.
 */
export function buildBwrapArgs(
  spec: JailSpec,
  options: { readonly limitsBy?: 'prlimit' | 'command' } = {},
): string[] {
  const args: string[] = [
    // New user, PID, network, IPC, UTS and cgroup namespaces (§11–13, §16, §25): no host
    // sockets or loopback, no host processes, no host SysV IPC.
    '--unshare-all',
    // A user namespace even when started by root, and none nested inside it (§1, §3).
    '--unshare-user',
    '--disable-userns',
    // Started as root of a layer host's user namespace: the program still runs as the caller.
    ...(spec.runAs === undefined
      ? []
      : ['--uid', String(spec.runAs.uid), '--gid', String(spec.runAs.gid)]),
    // No capabilities inside, so no remount of a read-only bind (§1, §23).
    '--cap-drop',
    'ALL',
    // A new session: no controlling terminal to inject keystrokes into (§18).
    '--new-session',
    // When we die or kill bubblewrap, the whole PID namespace goes with it (§19).
    '--die-with-parent',
    // The command reaps in bubblewrap's place: bubblewrap's own PID 1 is dumpable, and the
    // kill of a command's stragglers spares PID 1 (decision 0036).
    ...(spec.asPidOne === true ? ['--as-pid-1'] : []),
    // A filter for a jail whose PID 1 sets none itself (jail/no-keys-filter.ts).
    ...(spec.seccompFd === undefined ? [] : ['--seccomp', String(spec.seccompFd)]),
    // Nothing of the host's environment; only what the spec lists (§21).
    '--clearenv',
  ]
  for (const [name, value] of Object.entries(spec.environment)) args.push('--setenv', name, value)
  // A minimal read-only system: /usr and a short list from /etc, not the host's root (§10, §11).
  args.push(...readOnlySystemArgs())
  args.push(...procArgs(), '--dev', '/dev')
  // A private, size-capped /tmp and /dev/shm (§26): the only places outside the workspace a
  // program can write (the root and /dev are made read-only below).
  args.push('--size', String(spec.limits.tmpBytes), '--tmpfs', '/tmp')
  args.push('--size', String(spec.limits.tmpBytes), '--tmpfs', '/dev/shm')
  // The IPC namespace's POSIX message queues, listed: a jail that runs one job after another
  // removes them between two as it empties /tmp (decision 0043).
  args.push('--mqueue', '/dev/mqueue')
  // The programs' home, empty, a folder of the root made read-only below: no command leaves a
  // dotfile there that a later command obeys (a warm jail's `/tmp` outlives each command, and
  // git expands `~/` in a repository's own settings; decision 0064).
  args.push('--perms', '0555', '--dir', JAIL_HOME)
  // The workspace at a fixed path, so nothing reveals where it lives on the host.
  args.push(
    spec.workspaceAccess === 'read-write' ? '--bind' : '--ro-bind',
    spec.workspace,
    JAIL_WORKSPACE,
  )
  // Protected paths, read-only whether or not they existed (§7, §9); later binds win.
  for (const overlay of spec.overlays) {
    args.push(overlay.writable ? '--bind' : '--ro-bind', overlay.source, overlay.target)
  }
  for (const folder of spec.hiddenFolders) args.push('--tmpfs', folder, '--remount-ro', folder)
  for (const bind of spec.binds)
    args.push(bind.writable ? '--bind' : '--ro-bind', bind.source, bind.target)
  // The root and /dev are bubblewrap's own folders, writable by the program: read-only, so
  // nothing (an /etc/ld.so.preload, a file in /dev) outlives a command in a jail that runs the
  // next one (a warm jail, a jail started ahead: decision 0042). After every mount point exists.
  args.push('--remount-ro', '/dev', '--remount-ro', '/')
  args.push('--chdir', spec.cwd ?? JAIL_WORKSPACE)
  // Limits that bind inside the jail: processes (fork bombs), memory, file size (§26). Memory
  // is the cgroup's when there is one; else private writable memory (RLIMIT_DATA), never
  // address space, which WebAssembly, the JVM and Go reserve by the gigabyte and never use.
  if (options.limitsBy === 'command') args.push('--', ...spec.command)
  else args.push('--', PRLIMIT, ...limitWords(spec), '--', ...spec.command)
  return args
}
