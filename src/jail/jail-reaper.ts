/**
 * @module jail/jail-reaper
 * PID 1 of every jail eitri starts (decision 0038, refining 0036). bubblewrap's own PID 1 is
 * dumpable: a command of the same user may `ptrace` it or write its memory, and code it puts
 * there (clearing PID 1's parent-death signal, leaving bubblewrap's process group) keeps the
 * PID namespace, and every process in it, alive after the command, its deadline, the kill of
 * its job and eitri itself. So a jail runs with `--as-pid-1` and its command under this reaper,
 * a constant Perl program run by an execute-only copy of Perl (execute-only-copy.ts): the
 * kernel marks it non-dumpable at exec, so no command can trace it. It forks the command,
 * reaps whatever is reparented to it, and ends with the command's status (a signal as 128 + its
 * number, as bubblewrap's own init reports it); the PID namespace, and every straggler in it,
 * ends with it. From inside the namespace no signal reaches it (init without handlers).
 */
import type { JailBind, JailSpec } from '../bubblewrap/jail-spec.ts'
import { executeOnlyCopy } from './execute-only-copy.ts'
import { NO_KEYS_PERL } from './no-keys-filter.ts'
import { JAIL_PERL } from './prestarted-jail.ts'

/** Where the reaper's Perl (an execute-only copy) is mounted inside a jail. */
export const REAPER_PERL_MOUNT = '/opt/eitri/perl'

/** The reaper's program: `perl -e REAPER_SCRIPT -- COMMAND...`. */
export const REAPER_SCRIPT = String.raw`${NO_KEYS_PERL}
my $command = fork() // die "eitri: the jail cannot start its command: $!\n";
if ($command == 0) {
  exec { $ARGV[0] } @ARGV;
  print STDERR "eitri: failed to execute $ARGV[0]: $!\n";
  exit(($! + 0) == 2 ? 127 : 126);
}
while ((my $gone = wait()) != -1) {
  exit(($? & 127) ? 128 + ($? & 127) : $? >> 8) if $gone == $command;
}
exit 1;
`

/** `command` run under the reaper (with `--as-pid-1` and {@link reaperBind}). */
export function reaped(command: readonly string[], script: string = REAPER_SCRIPT): string[] {
  return [REAPER_PERL_MOUNT, '-e', script, '--', ...command]
}

/**
 * `spec` with its command run as PID 1 by `script` under the reaper's Perl (`perl`, from
 * {@link reaperPerl}): the reaper itself, or a program that reaps as it does (a jail started
 * ahead's waiter).
 */
export function underReaper(
  spec: JailSpec,
  perl: string,
  script: string = REAPER_SCRIPT,
): JailSpec {
  return {
    ...spec,
    command: reaped(spec.command, script),
    asPidOne: true,
    binds: [...spec.binds, reaperBind(perl)],
  }
}

/** The read-only bind of the reaper's Perl, from the path {@link reaperPerl} answered. */
export function reaperBind(perl: string): JailBind {
  return { source: perl, target: REAPER_PERL_MOUNT, writable: false }
}

/**
 * The execute-only copy of the jail's Perl that runs PID 1.
 *
 * @throws EitriError `jail_unavailable` when it cannot be made (a `noexec` temporary folder, a
 *   folder of that name that is not the caller's).
 */
export function reaperPerl(): Promise<string> {
  return executeOnlyCopy(JAIL_PERL)
}
