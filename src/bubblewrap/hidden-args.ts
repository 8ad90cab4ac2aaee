/**
 * @module bubblewrap/hidden-args
 * bubblewrap's options carry host paths (binds, overlay layers, temporary folders), and with
 * `--unshare-pid` the jail's PID 1 is bubblewrap's own reaper, whose command line any jailed
 * program reads in /proc/1/cmdline (`ps`). So the options do not travel as arguments: they go
 * NUL-separated through a descriptor (`--args FD`, which bubblewrap reads and closes before
 * it sets anything up), and the command line left is `bwrap --args FD -- COMMAND…`, the command
 * being the jail's own (paths inside it).
 */

/** The descriptor bubblewrap reads its options from, in every launch chain (after stderr). */
export const OPTIONS_FD = 3

/**
 * The descriptor bubblewrap reads a seccomp program from (`--seccomp`), when a start passes one:
 * after the options'. Only the chains that Node spawns pass it, not a launcher started ahead.
 */
export const SECCOMP_FD = 4

/**
 * How many words follow each bubblewrap option (bubblewrap 0.8's list); a word not here, where an
 * option is expected, ends the options (the command starts there, as bubblewrap reads it).
 */
const OPTION_ARITY: Readonly<Record<string, number>> = {
  ...Object.fromEntries(
    [
      '--unshare-all',
      '--share-net',
      '--unshare-user',
      '--unshare-user-try',
      '--unshare-ipc',
      '--unshare-pid',
      '--unshare-net',
      '--unshare-uts',
      '--unshare-cgroup',
      '--unshare-cgroup-try',
      '--disable-userns',
      '--assert-userns-disabled',
      '--clearenv',
      '--new-session',
      '--die-with-parent',
      '--as-pid-1',
    ].map((option) => [option, 0]),
  ),
  ...Object.fromEntries(
    [
      '--args',
      '--userns',
      '--userns2',
      '--pidns',
      '--uid',
      '--gid',
      '--hostname',
      '--chdir',
      '--unsetenv',
      '--lock-file',
      '--sync-fd',
      '--remount-ro',
      '--exec-label',
      '--file-label',
      '--proc',
      '--dev',
      '--tmpfs',
      '--mqueue',
      '--dir',
      '--seccomp',
      '--add-seccomp-fd',
      '--block-fd',
      '--userns-block-fd',
      '--info-fd',
      '--json-status-fd',
      '--cap-add',
      '--cap-drop',
      '--perms',
      '--size',
    ].map((option) => [option, 1]),
  ),
  ...Object.fromEntries(
    [
      '--setenv',
      '--bind',
      '--bind-try',
      '--dev-bind',
      '--dev-bind-try',
      '--ro-bind',
      '--ro-bind-try',
      '--bind-fd',
      '--ro-bind-fd',
      '--file',
      '--bind-data',
      '--ro-bind-data',
      '--symlink',
      '--chmod',
    ].map((option) => [option, 2]),
  ),
}

/**
 * Splits bubblewrap's `args` into its options, to send through {@link OPTIONS_FD}, and the
 * arguments it is started with: `--args FD -- COMMAND…` (`args` unchanged when it has none, or
 * when one holds a NUL).
 *
 * @example
 * hideOptions(['--bind', '/tmp/x', '/w', '--', 'ls'])
 * // { options: ['--bind', '/tmp/x', '/w'], argv: ['--args', '3', '--', 'ls'] }
 */
export function hideOptions(args: readonly string[]): {
  readonly options: readonly string[]
  readonly argv: readonly string[]
} {
  let at = 0
  while (at < args.length) {
    const arity = OPTION_ARITY[args[at] ?? '']
    if (arity === undefined) break
    at += 1 + arity
  }
  const options = args.slice(0, Math.min(at, args.length))
  // A NUL would split a word in two on the descriptor (an option smuggled in); on the command
  // line it fails the start, as it always did.
  if (options.length === 0 || options.some((word) => word.includes('\0')))
    return { options: [], argv: [...args] }
  const command = args[at] === '--' ? args.slice(at + 1) : args.slice(at)
  return { options, argv: ['--args', String(OPTIONS_FD), '--', ...command] }
}

/** Options as bubblewrap reads them from a descriptor: each word ended by a NUL. */
export function optionsData(options: readonly string[]): string {
  return options.map((word) => `${word}\0`).join('')
}
