/**
 * @module jail/prestarted-launcher
 * A cold start (a background job, a command the warm jail cannot take) used to be a chain of
 * programs before bubblewrap: a shell step that joins the memory cgroup, `nsenter` into the
 * layer host's mount namespace (which also drops to the jail's user), then bubblewrap. On a
 * machine where starting a program costs milliseconds, each link cost about as much as a plain
 * spawn. A launcher does all of those steps in one program, and is started ahead of its
 * command: the next cold start of a jail takes it ready, writes bubblewrap's argv to it, and it
 * execs bubblewrap at once. What is left on the command's path is bubblewrap itself; on overlays
 * even that starts ahead (prestarted-jail.ts gives a launcher bubblewrap's argv at once).
 *
 * The launcher is a constant Perl script (Perl is part of every Debian system, and calls any
 * system call by number; see layer-host-script.ts): it joins its cgroup (as the caller, who may
 * move itself there), enters the namespaces it was given (`setns`, as nsenter does), drops to
 * the jail's user (no supplementary groups, real, effective and saved ids), then waits on fd 3
 * for bubblewrap's options and argv (NUL-terminated words). It closes fd 3 and hands the
 * options to bubblewrap on a new fd 3 (`--args 3`, read and closed by bubblewrap), so the command
 * gets fds 0-2 only, as before (a jail started ahead also gets fd 4, which its waiter closes). Any step that fails ends it with status 125 and a message; a
 * launcher that ended is never used, and the start goes the old way (which reports the failure).
 * An end of fd 3 with no words ends it without running anything (the jail closed, or eitri died).
 *
 * Limits stay inside bubblewrap (`prlimit` after it made the user namespace): RLIMIT_NPROC set
 * before would count every process of the jail's user on the host, all jails together.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import type { Writable } from 'node:stream'
import { hideOptions } from '../bubblewrap/hidden-args.ts'
import { killProcessGroup } from '../util/bounded-spawn.ts'
import type { MemoryCgroup, MemoryCgroups } from './memory-cgroup.ts'

/** The launcher's program; words reach it only as arguments and on fd 3, never as code. */
export const LAUNCHER_SCRIPT = String.raw`
# No 'use warnings' (as in the waiter, prestarted-jail.ts): it doubled Perl's start.
use strict;
my %NUMBERS = (
  x86_64 => { setns => 308, setgroups => 116, setresgid => 119, setresuid => 117 },
  aarch64 => { setns => 268, setgroups => 159, setresgid => 149, setresuid => 147 },
);
my %NAMESPACE = (user => 0x10000000, mnt => 0x00020000);
sub fail { print STDERR "eitri: the jail could not start: $_[0]: $!\n"; exit 125 }
my $machine = '';
if (open(my $arch, '<', '/proc/sys/kernel/arch')) { $machine = <$arch> // ''; close $arch }
chomp $machine;
my $nr = $NUMBERS{$machine} or do { $! = 0; fail("this machine ($machine) is not one the launcher knows") };
for my $word (@ARGV) {
  my ($step, $value) = split /=/, $word, 2;
  if ($step eq 'cgroup') {
    # Writing 0 moves the writer: everything it starts is born inside.
    open(my $procs, '>', $value) or fail("could not open the memory cgroup $value");
    (syswrite($procs, '0') // 0) == 1 or fail("could not enter the memory cgroup $value");
    close $procs or fail("could not enter the memory cgroup $value");
  } elsif ($step eq 'user' || $step eq 'mnt') {
    open(my $ns, '<', $value) or fail("could not open the namespace $value");
    syscall($nr->{setns}, fileno($ns), $NAMESPACE{$step}) == 0 or fail("could not enter the namespace $value");
    close $ns;
  } elsif ($step eq 'drop') {
    my ($uid, $gid) = map { $_ + 0 } split /:/, $value;
    syscall($nr->{setgroups}, 0, 0) == 0 or fail('could not drop the supplementary groups');
    syscall($nr->{setresgid}, $gid, $gid, $gid) == 0 or fail("could not become group $gid");
    syscall($nr->{setresuid}, $uid, $uid, $uid) == 0 or fail("could not become user $uid");
    ($< == $uid && $> == $uid) or fail("still not user $uid");
  } else { $! = 0; fail("unknown step $step") }
}
open(my $control, '<&=', 3) or fail('no control descriptor');
my $words = do { local $/; <$control> };
close $control;
exit 0 unless defined $words && length $words;
my @argv = split /\0/, $words, -1;
pop @argv;
# First the count of bubblewrap's options, then the options, then its argv: the options reach
# it on fd 3 (--args 3), so no host path shows in its command line (hidden-args.ts).
my $hidden = shift @argv;
my @options = splice @argv, 0, $hidden;
# Declared out here: the pipe must outlive the block, open at the exec.
my ($reader, $writer);
if ($hidden > 0) {
  my $data = join('', map { "$_\0" } @options);
  # The read end is fd 3 (the lowest free); Perl makes it close-on-exec, so F_SETFD (2) clears that.
  pipe($reader, $writer) or fail('could not make the options pipe');
  fileno($reader) == 3 or do { $! = 0; fail('the options pipe is not fd 3') };
  fcntl($reader, 2, 0) or fail('could not pass the options pipe on');
  # F_SETPIPE_SZ: room for every option, so writing all before the exec cannot block.
  fcntl($writer, 1031, length($data) + 4096) if length($data) > 65536;
  (syswrite($writer, $data) // -1) == length($data) or fail('could not write the options');
  close $writer;
}
exec { $argv[0] } @argv or fail("could not run $argv[0]");
`

/** What a launcher does before it waits: the part of a start that does not depend on the command. */
export interface LauncherShape {
  /** Namespaces to enter, in order (a layer host's: its user namespace first, then its mounts). */
  readonly namespaces: readonly { readonly type: 'user' | 'mnt'; readonly path: string }[]
  /** The jail's user to become (a root caller's jail); none when the jail runs as the caller. */
  readonly drop?: { readonly uid: number; readonly gid: number } | undefined
  /** The memory limit of its cgroup (one is made where the jail can). */
  readonly memoryBytes: number
}

function keyOf(shape: LauncherShape): string {
  return JSON.stringify([shape.namespaces, shape.drop ?? null, shape.memoryBytes])
}

/** Sets whether a stream's handle keeps the event loop alive. */
function hold(stream: unknown, held: boolean): void {
  const handle = stream as { ref?: () => void; unref?: () => void } | null
  if (held) handle?.ref?.()
  else handle?.unref?.()
}

/** One launcher waiting for its argv; see the module comment. */
export class PrestartedLauncher {
  readonly child: ChildProcess
  readonly memoryCgroup: MemoryCgroup | undefined
  readonly key: string
  #ended = false
  #used = false

  /**
   * `readiness`: fd 4 is a pipe back to eitri, passed through to the program it runs (a jail
   * started ahead's waiter, which signals on it and closes it before it runs the command). Never
   * for a launcher that execs bubblewrap on the command itself: the command would inherit it.
   */
  constructor(
    shape: LauncherShape,
    memoryCgroup: MemoryCgroup | undefined,
    options: { readonly readiness?: boolean } = {},
  ) {
    this.key = keyOf(shape)
    this.memoryCgroup = memoryCgroup
    const steps = [
      ...(memoryCgroup === undefined ? [] : [`cgroup=${memoryCgroup.procsFile}`]),
      ...shape.namespaces.map((namespace) => `${namespace.type}=${namespace.path}`),
      ...(shape.drop === undefined ? [] : [`drop=${shape.drop.uid}:${shape.drop.gid}`]),
    ]
    this.child = spawn('perl', ['-e', LAUNCHER_SCRIPT, '--', ...steps], {
      // As a jailed process's own start: its own process group, fds 0-2 for the program, fd 3
      // for the argv, nothing of the caller's environment (and fd 4 for a waiter's readiness).
      stdio:
        options.readiness === true
          ? ['pipe', 'pipe', 'pipe', 'pipe', 'pipe']
          : ['pipe', 'pipe', 'pipe', 'pipe'],
      detached: true,
      env: { PATH: '/usr/local/bin:/usr/bin:/bin' },
    })
    const ended = (): void => {
      this.#ended = true
    }
    this.child.once('error', ended)
    this.child.once('exit', ended)
    for (const stream of this.child.stdio) {
      ;(stream as NodeJS.EventEmitter | null)?.on('error', () => undefined)
    }
    this.hold(false)
  }

  /** True while it waits, unused: it started and has not ended. */
  get ready(): boolean {
    return !this.#used && !this.#ended && this.child.pid !== undefined
  }

  /**
   * Makes it exec `program` with `args`; the caller adopts {@link child} in the same tick (its
   * events are not missed). False when it cannot be used: ended, used, or an argument no
   * program can receive (a NUL).
   */
  run(
    program: string,
    args: readonly string[],
    options: { readonly hold?: boolean } = {},
  ): boolean {
    const hidden = hideOptions(args)
    const words = [String(hidden.options.length), ...hidden.options, program, ...hidden.argv]
    if (!this.ready || words.some((word) => word.includes('\0'))) return false
    this.#used = true
    // A jail started ahead (prestarted-jail.ts) is held only once its command is known.
    this.hold(options.hold !== false)
    ;(this.child.stdio[3] as Writable).end(words.map((word) => `${word}\0`).join(''))
    return true
  }

  /**
   * Ends it unused: no program runs, and its group is killed. Its cgroup is removed too, unless
   * the caller starts in it the usual way (`keepCgroup`), and removes it after.
   */
  discard(options: { keepCgroup?: boolean } = {}): void {
    if (this.#used) return
    this.#used = true
    ;(this.child.stdio[3] as Writable | null)?.end()
    if (this.child.pid !== undefined && !this.#ended) killProcessGroup(this.child.pid)
    if (options.keepCgroup !== true) void this.memoryCgroup?.remove()
  }

  /** True once its process ended (or never started). */
  get ended(): boolean {
    return this.#ended
  }

  /** Whether it keeps the event loop alive: only once it runs a program. */
  hold(held: boolean): void {
    if (held) this.child.ref()
    else this.child.unref()
    for (const stream of this.child.stdio) hold(stream, held)
  }
}

/** A jail's launcher started ahead of its next cold start (at most one). */
export class PrestartedLaunchers {
  readonly #memory: MemoryCgroups
  #waiting: PrestartedLauncher | undefined
  #closed = false

  constructor(memory: MemoryCgroups) {
    this.#memory = memory
  }

  /** The waiting launcher, if it is ready for `shape`; another one waiting is ended. */
  take(shape: LauncherShape): PrestartedLauncher | undefined {
    const waiting = this.#waiting
    this.#waiting = undefined
    if (waiting === undefined) return undefined
    if (waiting.ready && waiting.key === keyOf(shape)) return waiting
    waiting.discard()
    return undefined
  }

  /** Starts a launcher for `shape`, unless one waits for it already. */
  prepare(shape: LauncherShape): void {
    if (this.#closed) return
    if (this.#waiting?.ready === true && this.#waiting.key === keyOf(shape)) return
    this.#waiting?.discard()
    this.#waiting = new PrestartedLauncher(shape, this.#memory.create(shape.memoryBytes))
  }

  /** Ends the waiting launcher; none is started after. */
  close(): void {
    this.#closed = true
    this.#waiting?.discard()
    this.#waiting = undefined
  }
}
