/**
 * @module jail/jail-forker
 * The warm jail's first process: a constant Perl script, PID 1 of the jail's PID namespace
 * (bubblewrap's `--as-pid-1`), which starts the supervisor (Node) as its child and then starts
 * each command for it. A Node process forks its whole address space to start a program, which
 * costs milliseconds here; a small Perl process forks in a fraction of that (decision 0024).
 *
 * Being PID 1 matters: the supervisor kills every straggler with `kill(-1, SIGKILL)`, which
 * spares only the caller and the namespace's init. As init the forker also reaps every orphan,
 * so a command's killed leftovers are gone at once, as bubblewrap's own init did. When the
 * supervisor ends, so does the forker and with it the jail. When the script is not PID 1 (no
 * `--as-pid-1`), it execs the supervisor alone, which then starts commands with Node's spawn.
 *
 * The supervisor talks to the forker on its fd 3, one end of a socket pair (a command can open
 * another process's pipes through /proc/PID/fd, not its sockets). A command arrives as in
 * the waiter of prestarted-jail.ts: a ten-digit length, then NUL-terminated words (the working
 * folder, the number of environment entries, the entries, the argv). The forker makes two
 * pipes, forks the command in a new session (its stdin /dev/null, stdout and stderr the pipes,
 * the jail's environment with those entries set, in that folder) and answers `started PID OUT ERR` (its own fds of
 * the pipes' read ends). The supervisor opens those through /proc/PPID/fd, answers one byte, and
 * the forker closes its ends: from then on only the command and what it starts hold the pipes,
 * as with Node's spawn. When the command is reaped the forker answers `exit PID STATUS` (the
 * wait status); a fork that failed answers `failed WHY`.
 */

/** The forker's program; commands reach it only through its socket, never as code. */
export const FORKER_SCRIPT = String.raw`
use strict; use warnings;
use POSIX ();
use Socket ();
exec { $ARGV[0] } @ARGV or die "eitri: could not start the supervisor: $!\n" if $$ != 1;
# A socket, not a pipe: a command can open a pipe of another process through /proc/PID/fd, a
# socket it cannot.
socketpair(my $channel, my $theirs, Socket::AF_UNIX(), Socket::SOCK_STREAM(), Socket::PF_UNSPEC())
  or die "eitri: no socket pair: $!\n";
my $supervisor = fork() // die "eitri: could not start the supervisor: $!\n";
if ($supervisor == 0) {
  # fd 3 of the supervisor, by way of a copy without close-on-exec (never fd 3: that is in use).
  my $copy = POSIX::dup(fileno $theirs) // die "eitri: no fd 3: $!\n";
  POSIX::dup2($copy, 3) // die "eitri: no fd 3: $!\n";
  POSIX::close($copy);
  exec { $ARGV[0] } @ARGV, '--forker' or die "eitri: could not start the supervisor: $!\n";
}
close $theirs;
# The host's channel is the supervisor's alone.
open(STDIN, '<', '/dev/null'); open(STDOUT, '>', '/dev/null');
my $command;
sub report { my $line = "$_[0]\n"; syswrite($channel, $line) == length $line or exit 125 }
$SIG{CHLD} = sub {
  while ((my $pid = waitpid(-1, POSIX::WNOHANG())) > 0) {
    my $status = $?;
    exit(($status & 127) ? 128 + ($status & 127) : $status >> 8) if $pid == $supervisor;
    if (defined $command && $pid == $command) { undef $command; report("exit $pid $status") }
  }
};
sub take {
  my ($count) = @_;
  my $buffer = '';
  while (length $buffer < $count) {
    my $read = sysread($channel, $buffer, $count - length $buffer, length $buffer);
    next if !defined $read && $!{EINTR};
    defined $read or exit 125;
    exit 0 if $read == 0;
  }
  return $buffer;
}
my $children = POSIX::SigSet->new(POSIX::SIGCHLD());
for (;;) {
  my $size = take(10);
  $size =~ /\A[0-9]{10}\z/ or exit 125;
  my @words = split /\0/, take($size + 0), -1;
  pop @words;
  my ($cwd, $count) = splice @words, 0, 2;
  defined $count && $count =~ /\A[0-9]+\z/ && @words > $count or exit 125;
  my @environment = splice @words, 0, $count;
  # No reaping between the fork and the command's pid being known.
  POSIX::sigprocmask(POSIX::SIG_BLOCK(), $children);
  my ($outRead, $outWrite, $errRead, $errWrite);
  my $pid;
  if (pipe($outRead, $outWrite) && pipe($errRead, $errWrite)) { $pid = fork() }
  if (!defined $pid) {
    my $why = "$!";
    POSIX::sigprocmask(POSIX::SIG_UNBLOCK(), $children);
    report("failed could not start the command: $why");
    next;
  }
  if ($pid == 0) {
    $SIG{CHLD} = 'DEFAULT';
    POSIX::sigprocmask(POSIX::SIG_UNBLOCK(), $children);
    POSIX::setsid();
    open(STDIN, '<', '/dev/null');
    open(STDOUT, '>&', $outWrite); open(STDERR, '>&', $errWrite);
    chdir $cwd or do { print STDERR "eitri: could not enter $cwd: $!\n"; POSIX::_exit(127) };
    for my $entry (@environment) { my ($name, $value) = split /=/, $entry, 2; $ENV{$name} = $value }
    { no warnings 'exec'; exec { $words[0] } @words }
    print STDERR "eitri: could not run $words[0]: $!\n";
    POSIX::_exit(($! + 0) == 2 ? 127 : 126);
  }
  $command = $pid;
  report("started $pid " . fileno($outRead) . ' ' . fileno($errRead));
  POSIX::sigprocmask(POSIX::SIG_UNBLOCK(), $children);
  take(1);
  close $_ for $outRead, $outWrite, $errRead, $errWrite;
}
`
