/**
 * @module jail/launcher-spawner
 * Where launchers (prestarted-launcher.ts) are started from. Node starts a program by forking
 * itself: the fork copies the page tables of a process of hundreds of megabytes, and the thread
 * waits until the child has exec'd. On the small VM measured that was 5 to 20 ms of the event
 * loop and about 12 ms of CPU a launcher, on every background job (a fork of Node, then Perl's
 * start), more than the rest of a job's own path. So one small resident Perl process, the
 * spawner, started once a process, forks the launchers: a fork of a process of a few megabytes,
 * and no interpreter to start, since the child runs the launcher's steps in the spawner's
 * already-running Perl.
 *
 * The spawner reads one request a line on its stdin (`F id readiness steps…`: fork a launcher
 * with those steps; `O id`: eitri opened that launcher's pipes). For each launcher it makes the
 * pipes of the launcher's fds 0-3 (and 4, a waiter's readiness) and forks; the child starts a
 * session of its own, puts those pipes on fds 0-4, closes every other descriptor, and runs the
 * launcher (cgroup, namespaces, the jail's user, then its argv on fd 3 and the exec of
 * bubblewrap), exactly as the launcher did when Node started it. The spawner answers
 * `F id pid fds…`, the numbers of its own ends of those pipes: eitri opens them anew through
 * `/proc/<spawner>/fd/<n>` (a pipe opened there is the same pipe) and says `O id`, and the
 * spawner closes its ends. It watches each child through a pidfd, reaps it and answers
 * `X pid code signal`. It runs with no signal handlers; an end of its stdin (eitri closed it, or
 * died) ends it, and a jail started from it dies with it (bubblewrap's `--die-with-parent`), as
 * it died with eitri before.
 *
 * The spawner runs as the caller (a root caller's launchers drop to the jail's user themselves)
 * and is reached only through eitri's pipes: nothing a jail runs can see it (another PID
 * namespace), write to it or open its descriptors.
 */
import { spawn, type ChildProcess } from 'node:child_process'
import { EventEmitter } from 'node:events'
import fs from 'node:fs'
import net from 'node:net'
import os from 'node:os'
import { PassThrough, type Readable, type Writable } from 'node:stream'
import { killProcessGroup, type ProgramChild } from '../util/bounded-spawn.ts'

/** The spawner's program; words reach it only as request lines and on fd 3, never as code. */
export const SPAWNER_SCRIPT = String.raw`
# No 'use warnings' (as in the waiter, prestarted-jail.ts): it doubled Perl's start.
use strict;
use POSIX ();
my %NUMBERS = (
  x86_64 => { setns => 308, setgroups => 116, setresgid => 119, setresuid => 117, pidfd_open => 434 },
  aarch64 => { setns => 268, setgroups => 159, setresgid => 149, setresuid => 147, pidfd_open => 434 },
);
my %NAMESPACE = (user => 0x10000000, mnt => 0x00020000);
my $machine = '';
if (open(my $arch, '<', '/proc/sys/kernel/arch')) { $machine = <$arch> // ''; close $arch }
chomp $machine;
my $nr = $NUMBERS{$machine} or do { print STDERR "eitri: the launcher spawner does not know this machine ($machine)\n"; exit 125 };

# A launcher (the child): its steps, then its argv on fd 3, then bubblewrap. It never returns.
sub fail { print STDERR "eitri: the jail could not start: $_[0]: $!\n"; POSIX::_exit(125) }
sub launch {
  for my $word (@_) {
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
  POSIX::_exit(0) unless defined $words && length $words;
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
}

# The spawner. Unbuffered answers: a child never inherits a half-written one.
$| = 1;
# fds 3 and 4 held, so every pipe made below is above the launcher's five.
open(my $hold3, '<', '/dev/null') or exit 125;
open(my $hold4, '<', '/dev/null') or exit 125;
my (%watched, %ends);
sub fork_launcher {
  my ($id, $readiness, @steps) = @_;
  my (@child, @parent);
  # [its end, our end] for fds 0 (it reads), 1, 2 (it writes), 3 (it reads), 4 (it writes).
  for my $fd (0 .. ($readiness ? 4 : 3)) {
    pipe(my $reader, my $writer) or do { print "E $id could not make a pipe: $!\n"; return };
    my $reads = $fd == 0 || $fd == 3;
    push @child, $reads ? $reader : $writer;
    push @parent, $reads ? $writer : $reader;
  }
  my $pid = fork();
  defined $pid or do { print "E $id could not fork: $!\n"; return };
  if ($pid == 0) {
    POSIX::setsid();
    # Perl counts the handles on a descriptor: the held ones let go of, the launcher's close of
    # fd 3 closes it.
    close $hold3;
    close $hold4;
    for my $fd (0 .. $#child) { POSIX::dup2(fileno($child[$fd]), $fd) // fail('could not set up the descriptors') }
    opendir(my $open, '/proc/self/fd') or fail('could not list the descriptors');
    my @others = grep { /\A[0-9]+\z/ && $_ > $#child } readdir $open;
    closedir $open;
    POSIX::close($_) for @others;
    launch(@steps);
  }
  close $_ for @child;
  my $pidfd = syscall($nr->{pidfd_open}, $pid + 0, 0);
  if ($pidfd < 0) {
    print "E $id could not watch the launcher: $!\n";
    kill 'KILL', $pid;
    waitpid($pid, 0);
    return;
  }
  $watched{$pidfd} = $pid;
  $ends{$id} = \@parent;
  print join(' ', 'F', $id, $pid, map { fileno $_ } @parent), "\n";
}
my $input = '';
while (1) {
  my $wanted = '';
  vec($wanted, 0, 1) = 1;
  vec($wanted, $_, 1) = 1 for keys %watched;
  my $ready = select(my $found = $wanted, undef, undef, undef);
  if ($ready < 0) { next if $!{EINTR}; exit 1 }
  for my $pidfd (keys %watched) {
    next unless vec($found, $pidfd, 1);
    my $pid = delete $watched{$pidfd};
    waitpid($pid, 0);
    my $status = $?;
    POSIX::close($pidfd);
    print 'X ', $pid, ' ', (($status & 127) ? '- ' . ($status & 127) : ($status >> 8) . ' -'), "\n";
  }
  next unless vec($found, 0, 1);
  my $read = sysread(STDIN, $input, 65536, length $input);
  exit 0 unless $read;
  while ($input =~ s/\A([^\n]*)\n//) {
    my ($verb, $id, @rest) = split / /, $1;
    if ($verb eq 'F') { fork_launcher($id, @rest) }
    elsif ($verb eq 'O') { close $_ for @{ delete $ends{$id} // [] } }
  }
}
`

const PATH = '/usr/local/bin:/usr/bin:/bin'

/** A launcher forked by the spawner: its pipes, its process id once known, its end. */
export class ForkedLauncher extends EventEmitter implements ProgramChild {
  readonly stdio: readonly PassThrough[]
  #pid: number | undefined
  #exitCode: number | null = null
  #signalCode: NodeJS.Signals | null = null
  #exited = false
  #attached = false
  #closed = false
  #held = false
  #killWhenKnown: NodeJS.Signals | undefined
  #sockets: net.Socket[] = []
  /** Readable pipes not yet at their end; 'close' waits for them after the exit. */
  #open = 0
  readonly #spawner: LauncherSpawner

  constructor(spawner: LauncherSpawner, pipes: number) {
    super()
    this.#spawner = spawner
    this.stdio = Array.from({ length: pipes }, () => new PassThrough())
    for (const stream of this.stdio) stream.on('error', () => undefined)
  }

  get pid(): number | undefined {
    return this.#pid
  }

  get stdin(): Writable {
    return this.stdio[0] as Writable
  }

  get stdout(): Readable {
    return this.stdio[1] as Readable
  }

  get stderr(): Readable {
    return this.stdio[2] as Readable
  }

  get exitCode(): number | null {
    return this.#exitCode
  }

  get signalCode(): NodeJS.Signals | null {
    return this.#signalCode
  }

  /** Sends `signal` to the launcher (to its whole group for SIGKILL), now or once it is known. */
  kill(signal: NodeJS.Signals = 'SIGTERM'): boolean {
    if (this.#exited) return false
    if (this.#pid === undefined) {
      this.#killWhenKnown = signal
      return true
    }
    if (signal === 'SIGKILL' && killProcessGroup(this.#pid)) return true
    try {
      process.kill(this.#pid, signal)
      return true
    } catch {
      return false
    }
  }

  ref(): void {
    if (this.#held) return
    this.#held = true
    for (const socket of this.#sockets) socket.ref()
    if (!this.#exited) this.#spawner.hold(true)
  }

  unref(): void {
    if (!this.#held) return
    this.#held = false
    for (const socket of this.#sockets) socket.unref()
    if (!this.#exited) this.#spawner.hold(false)
  }

  /** The spawner forked it: `ends` are the spawner's ends of its pipes, in fd order. */
  forked(pid: number, ends: readonly string[], opened: () => void): void {
    this.#pid = pid
    if (this.#killWhenKnown !== undefined) this.kill(this.#killWhenKnown)
    void Promise.all(ends.map((end, fd) => this.#attach(fd, end))).finally(() => {
      this.#attached = true
      opened()
      this.#maybeClose()
    })
  }

  /** Opens the spawner's end of pipe `fd` and joins it to the stream of that fd. */
  async #attach(fd: number, end: string): Promise<void> {
    const stream = this.stdio[fd] as PassThrough
    // The launcher reads fds 0 and 3, and writes 1, 2 and 4.
    const writes = fd === 0 || fd === 3
    const flags = (writes ? fs.constants.O_WRONLY : fs.constants.O_RDONLY) | fs.constants.O_NONBLOCK
    let descriptor: number
    try {
      descriptor = await new Promise<number>((resolve, reject) =>
        fs.open(this.#spawner.descriptorPath(end), flags, (error, opened) =>
          error === null ? resolve(opened) : reject(error),
        ),
      )
    } catch {
      // Its reader ended already (a write end no one reads), or the spawner is gone.
      if (writes) stream.resume()
      else stream.end()
      return
    }
    const socket = new net.Socket({ fd: descriptor, readable: !writes, writable: writes })
    socket.on('error', () => undefined)
    if (!this.#held) socket.unref()
    this.#sockets.push(socket)
    // A closed socket's ref() and unref() wait for a 'connect' that never comes: a jail that
    // runs many jobs (prestarted-jail.ts) would pile up listeners on its closed pipes.
    socket.once('close', () => {
      this.#sockets = this.#sockets.filter((open) => open !== socket)
    })
    if (writes) {
      stream.pipe(socket)
      socket.once('close', () => {
        stream.unpipe(socket)
        stream.resume()
      })
    } else {
      this.#open++
      socket.pipe(stream)
      socket.once('close', () => {
        stream.end()
        this.#open--
        this.#maybeClose()
      })
    }
  }

  /** The spawner reaped it. */
  exited(code: number | null, signal: NodeJS.Signals | null): void {
    if (this.#exited) return
    this.#exited = true
    this.#exitCode = code
    this.#signalCode = signal
    if (this.#held) this.#spawner.hold(false)
    this.emit('exit', code, signal)
    this.#maybeClose()
  }

  /** The spawner could not fork it, or ended before it did. */
  failed(message: string): void {
    if (this.#exited) return
    this.#exited = true
    if (this.#held) this.#spawner.hold(false)
    for (const stream of this.stdio) stream.end()
    this.emit('error', new Error(message))
  }

  /** 'close' once it exited and every pipe it writes reached its end. */
  #maybeClose(): void {
    if (!this.#exited || !this.#attached || this.#open > 0 || this.#closed) return
    this.#closed = true
    this.emit('close', this.#exitCode, this.#signalCode)
  }
}

/** The resident Perl process launchers are forked from; see the module comment. */
export class LauncherSpawner {
  readonly #child: ChildProcess
  readonly #waiting = new Map<string, ForkedLauncher>()
  readonly #running = new Map<number, ForkedLauncher>()
  #next = 0
  #held = 0
  #ended = false
  #pending = ''

  constructor() {
    this.#child = spawn('perl', ['-e', SPAWNER_SCRIPT], {
      stdio: ['pipe', 'pipe', 'ignore'],
      // A session of its own: a terminal's Ctrl-C to eitri's group does not end every jail.
      detached: true,
      env: { PATH },
    })
    this.#child.stdout?.setEncoding('utf8')
    this.#child.stdout?.on('data', (chunk: string) => this.#read(chunk))
    this.#child.stdin?.on('error', () => undefined)
    this.#child.once('error', () => this.#end())
    this.#child.once('exit', () => this.#end())
    this.#hold()
  }

  /** Its process id (undefined if it never started). */
  get pid(): number | undefined {
    return this.#child.pid
  }

  /** True while it can fork launchers. */
  get running(): boolean {
    return !this.#ended && this.#child.pid !== undefined
  }

  /** Forks a launcher with `steps` (words with no blank); its fd 4 is a readiness pipe if asked. */
  fork(steps: readonly string[], readiness: boolean): ForkedLauncher {
    const launcher = new ForkedLauncher(this, readiness ? 5 : 4)
    if (!this.running || steps.some((step) => /\s/.test(step) || step === '')) {
      queueMicrotask(() => launcher.failed('the launcher spawner cannot start it'))
      return launcher
    }
    const id = String(++this.#next)
    this.#waiting.set(id, launcher)
    this.#child.stdin?.write(`F ${id} ${readiness ? 1 : 0} ${steps.join(' ')}\n`)
    return launcher
  }

  /** Where eitri opens the spawner's descriptor `end` anew. */
  descriptorPath(end: string): string {
    if (!this.running) throw new Error('the launcher spawner ended')
    return `/proc/${String(this.#child.pid)}/fd/${end}`
  }

  /** Counts a launcher that keeps the event loop alive until it is reaped. */
  hold(held: boolean): void {
    this.#held += held ? 1 : -1
    this.#hold()
  }

  /** Ends it: launchers not yet reaped are killed. */
  close(): void {
    this.#child.stdin?.end()
    this.#end()
  }

  #hold(): void {
    // A child's pipes are sockets.
    const pipes = [this.#child.stdout, this.#child.stdin] as (net.Socket | null)[]
    if (this.#held > 0) {
      pipes[0]?.ref()
      this.#child.ref()
    } else {
      for (const pipe of pipes) pipe?.unref()
      this.#child.unref()
    }
  }

  #read(chunk: string): void {
    this.#pending += chunk
    let newline = this.#pending.indexOf('\n')
    while (newline >= 0) {
      this.#answer(this.#pending.slice(0, newline).split(' '))
      this.#pending = this.#pending.slice(newline + 1)
      newline = this.#pending.indexOf('\n')
    }
  }

  #answer([verb, first, ...rest]: string[]): void {
    if (verb === 'F' && first !== undefined) {
      const launcher = this.#waiting.get(first)
      this.#waiting.delete(first)
      const pid = Number(rest[0])
      if (launcher === undefined || !Number.isInteger(pid)) return
      this.#running.set(pid, launcher)
      launcher.forked(pid, rest.slice(1), () => this.#child.stdin?.write(`O ${first}\n`))
    } else if (verb === 'E' && first !== undefined) {
      this.#waiting.get(first)?.failed(rest.join(' '))
      this.#waiting.delete(first)
    } else if (verb === 'X' && first !== undefined) {
      const launcher = this.#running.get(Number(first))
      this.#running.delete(Number(first))
      const code = rest[0] === '-' ? null : Number(rest[0])
      const signal = rest[1] === '-' ? null : signalName(Number(rest[1]))
      launcher?.exited(code, signal)
    }
  }

  #end(): void {
    if (this.#ended) return
    this.#ended = true
    for (const launcher of this.#waiting.values()) launcher.failed('the launcher spawner ended')
    this.#waiting.clear()
    // Its children are orphans now, reaped by the host: ended here, as their parent's end.
    for (const launcher of this.#running.values()) {
      // Its group, or the launcher alone if it has not made its session yet.
      launcher.kill('SIGKILL')
      launcher.exited(null, 'SIGKILL')
    }
    this.#running.clear()
    if (shared === this) shared = undefined
  }
}

/** The name of signal `number` (SIGKILL for one Node does not name). */
function signalName(number: number): NodeJS.Signals {
  const found = Object.entries(os.constants.signals).find(([, value]) => value === number)
  return (found?.[0] as NodeJS.Signals | undefined) ?? 'SIGKILL'
}

let shared: LauncherSpawner | undefined

/** The process's spawner, started at its first use and again after it ended. */
export function launcherSpawner(): LauncherSpawner {
  shared ??= new LauncherSpawner()
  return shared
}
