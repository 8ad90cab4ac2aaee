/**
 * @module jail/prestarted-jail
 * A cold start's whole jail, started ahead of its command. The launcher started ahead
 * (prestarted-launcher.ts) took the cgroup, namespace and user steps off a cold start's path;
 * what was left was bubblewrap's own start with the full hardening and `prlimit`, each a
 * program exec'd, several milliseconds of CPU apiece on a small VM. So after a cold start the
 * jail now starts the next one entirely: the launcher execs bubblewrap at once, with the same
 * argv a cold start would get except for the command, which is a small waiter that sets the
 * same limits `prlimit` would (setrlimit, inside the jail's user namespace, before it reads
 * anything) in place of a `prlimit` exec'd before it.
 *
 * The waiter is a constant Perl script (Perl is part of every Debian system; the jail's /usr has
 * it). It reads one command on stdin: a ten-digit length, then NUL-terminated words (the working
 * folder, the number of environment entries, the entries, the argv), read with `sysread` so not
 * a byte of the program's own input is taken. It then enters the working folder, sets exactly
 * that environment and execs the program, which keeps stdin (the rest of the pipe) and the
 * waiter's process: the jail's tree is the one a cold start makes (bubblewrap, its PID 1, the
 * program). PID 1 is the waiter run by the reaper's execute-only Perl (jail-reaper.ts): it forks
 * the command's process at once and reaps, so nothing a command can trace holds the namespace. An end of stdin before the command ends it without running anything.
 *
 * The workspace: the jail binds a mount point of its own, made shared in the layer host (as a
 * warm jail's is); the command's fresh overlay is mounted on it only when the command is known,
 * and reaches the running jail. Nothing but the waiter runs in the jail before that, and its
 * /tmp is its own. Whatever the jail would differ in (access, limits, binds) is its key; a start
 * that does not match, or a jail that ended meanwhile, is not used, and the start goes the old way.
 */
import type { MemoryCgroup } from './memory-cgroup.ts'
import type { ForkedLauncher } from './launcher-spawner.ts'
import type { PrestartedLauncher } from './prestarted-launcher.ts'

/** Perl inside the jail (the jail's /usr is the host's, read-only). */
export const JAIL_PERL = '/usr/bin/perl'

/** The waiter's program; the command reaches it only on stdin, never as code. */
export const WAITER_SCRIPT = String.raw`
# No 'use warnings': loading warnings.pm doubled Perl's start here (about 10 ms of CPU on a
# small VM, on every jail started ahead); the script is constant and tested.
use strict;
sub fail { print STDERR "eitri: $_[0]: $!\n"; exit($_[1] // 125) }
# The jail's limits, set here rather than by a prlimit exec'd before Perl (one program less to
# start); before the command is read, so a failure ends the jail unused (the start goes the old way).
my %SETRLIMIT = (x86_64 => 160, aarch64 => 164);
my %RESOURCE = (fsize => 1, data => 2, nproc => 6);
my $machine = '';
if (open(my $arch, '<', '/proc/sys/kernel/arch')) { $machine = <$arch> // ''; close $arch }
chomp $machine;
for my $word (@ARGV) {
  my ($name, $value) = $word =~ /\A--([a-z]+)=([0-9]+)\z/ or do { $! = 0; fail("unknown limit $word") };
  my $resource = $RESOURCE{$name} // do { $! = 0; fail("unknown limit $word") };
  my $nr = $SETRLIMIT{$machine} or do { $! = 0; fail("this machine ($machine) is not one the waiter knows") };
  my $limit = pack('QQ', $value, $value);
  syscall($nr, $resource, $limit) == 0 or fail("could not set the limit $word");
}
# As PID 1 (run by the reaper's execute-only Perl, jail-reaper.ts): the command's process is a
# child forked now, ahead of the command; this process reaps whatever is reparented to it and
# ends with the command's status.
if ($$ == 1) {
  my $command = fork() // fail('could not start the command');
  if ($command != 0) {
    close STDIN;
    if (open(my $ready, '>&=', 4)) { close $ready }
    while ((my $gone = wait()) != -1) {
      exit(($? & 127) ? 128 + ($? & 127) : $? >> 8) if $gone == $command;
    }
    exit 1;
  }
}
# Ready: said on fd 4 (a pipe to eitri, where there is one), which is closed before anything
# else; the command never has it.
if (open(my $ready, '>&=', 4)) { syswrite($ready, 'R'); close $ready }
sub take {
  my ($count) = @_;
  my $buffer = '';
  while (length $buffer < $count) {
    my $read = sysread(STDIN, $buffer, $count - length $buffer, length $buffer);
    defined $read or fail('could not read the command');
    exit 0 if $read == 0;
  }
  return $buffer;
}
my $size = take(10);
$size =~ /\A[0-9]{10}\z/ or do { $! = 0; fail('the command was not readable') };
my @words = split /\0/, take($size + 0), -1;
pop @words;
my ($cwd, $count) = splice @words, 0, 2;
defined $count && $count =~ /\A[0-9]+\z/ && @words > $count or do { $! = 0; fail('the command was not readable') };
my @environment = splice @words, 0, $count;
chdir $cwd or fail("could not enter $cwd", 1);
%ENV = ();
for my $entry (@environment) { my ($name, $value) = split /=/, $entry, 2; $ENV{$name} = $value }
exec { $words[0] } @words;
fail("failed to execute $words[0]", ($! + 0) == 2 ? 127 : 126);
`

/** A jail waiting for its command; see the module comment. */
export class PrestartedJail {
  /** What a start must match to use it (access, limits, binds). */
  readonly key: string
  /** The shared mount point bound at the jail's workspace; the command's overlay goes on it. */
  readonly point: string
  /** Resolves once its waiter said it is ready, or it ended (then {@link ready} is false). */
  readonly started: Promise<void>
  readonly #launcher: PrestartedLauncher
  #header: string | undefined
  #used = false
  #signalled = false
  #taken = false

  /** Starts bubblewrap (`bwrap` with `args`, whose command is the waiter) through `launcher`. */
  constructor(
    launcher: PrestartedLauncher,
    key: string,
    point: string,
    bwrap: string,
    args: readonly string[],
  ) {
    this.#launcher = launcher
    this.key = key
    this.point = point
    this.started = new Promise((resolve) => {
      const readiness = launcher.child.stdio[4] as NodeJS.ReadableStream | null | undefined
      readiness?.once('data', () => {
        this.#signalled = true
        resolve()
      })
      readiness?.once('end', resolve)
      launcher.child.once('exit', () => resolve())
      launcher.child.once('error', () => resolve())
      if (launcher.ended || readiness === null || readiness === undefined) resolve()
    })
    // Not held: an idle jail keeps no event loop alive.
    if (!launcher.run(bwrap, args, { hold: false })) this.#used = true
  }

  /** True once its processes ended (or never started). */
  get ended(): boolean {
    return this.#launcher.ended
  }

  /** True once its waiter said it waits for the command (it may have ended since: {@link ready}). */
  get signalled(): boolean {
    return this.#signalled
  }

  /** True once a start took it (its command may not be known yet). */
  get taken(): boolean {
    return this.#taken
  }

  /** Marks it taken by a start: nothing is to be prepared for it any more. */
  take(): void {
    this.#taken = true
  }

  get child(): ForkedLauncher {
    return this.#launcher.child
  }

  get memoryCgroup(): MemoryCgroup | undefined {
    return this.#launcher.memoryCgroup
  }

  /**
   * True while it waits, unused: its processes have not ended (its process id may not be known
   * yet: the spawner's answer is on its way, and a kill waits for it).
   */
  get ready(): boolean {
    return !this.#used && !this.#launcher.ended
  }

  /**
   * Sets the command it runs, in `cwd` with exactly `environment`. False when no program can
   * receive it (a NUL in a word): the start then goes the old way.
   */
  command(
    cwd: string,
    environment: Readonly<Record<string, string>>,
    argv: readonly string[],
  ): boolean {
    const entries = Object.entries(environment).map(([name, value]) => `${name}=${value}`)
    const words = [cwd, String(entries.length), ...entries, ...argv]
    if (argv.length === 0 || words.some((word) => word.includes('\0'))) return false
    const body = Buffer.from(words.map((word) => `${word}\0`).join(''))
    if (body.length > 9_999_999_999) return false
    this.#header = `${String(body.length).padStart(10, '0')}${body.toString()}`
    return true
  }

  /**
   * Sends the command set by {@link command} (bubblewrap's argv is the fallback's, unused
   * here); the caller adopts {@link child} in the same tick. False when it cannot be used.
   */
  run(_program?: string, _args?: readonly string[]): boolean {
    if (!this.ready || this.#header === undefined) return false
    this.#used = true
    this.#launcher.hold(true)
    const stdin = this.child.stdin
    if (stdin === null) return false
    stdin.write(this.#header)
    return true
  }

  /** Ends it unused; its cgroup is removed too unless the caller starts in it (`keepCgroup`). */
  discard(options: { keepCgroup?: boolean } = {}): void {
    if (this.#used && options.keepCgroup === true) return
    this.#used = true
    this.child.stdin?.end()
    if (!this.#launcher.ended) this.child.kill('SIGKILL')
    if (options.keepCgroup !== true) void this.memoryCgroup?.remove()
  }
}
