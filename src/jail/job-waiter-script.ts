/**
 * @module jail/job-waiter-script
 * The program a jail started ahead runs as its PID 1 (bubblewrap's `--as-pid-1`): it sets the
 * jail's limits, says it is ready, then runs one job after another, each as its own child, and
 * between two jobs leaves nothing of the first behind. A constant Perl script (Perl is part of
 * every Debian system; the jail's /usr has it, and decision 0036 gives it an execute-only copy);
 * the jobs reach it only as data on its stdin, never as code. Decision 0042 says why.
 *
 * From eitri, on fd 0, records: a type byte, a ten-digit length, the payload.
 * - `C`: a job: NUL-terminated words (its working folder, the number of environment entries,
 *   the entries, its argv).
 * - `K`: a signal number for the running job: 9 kills every process of the jail but this one;
 *   any other goes to the job's process group.
 * - The end of fd 0: eitri let go of the jail; everything in it is killed and it ends.
 *
 * To eitri, on fd 1, frames: a type byte, a four-byte big-endian length, the payload.
 * - `O`, `E`: bytes the job wrote to its stdout, its stderr (its own pipes; stdin is /dev/null).
 * - `X`: the job's wait status, in decimal, once the job's first process ended, every other
 *   process of the jail was killed and reaped, and both pipes were read to their end.
 * - `R`: ready for the next job: /tmp, /dev/shm and /dev/mqueue (POSIX message queues) are empty, no SysV IPC object is left,
 *   those folders, /dev/pts and its ptmx have their modes back, fresh times and the same owner,
 *   extended attributes and ACLs as at the start, and nothing a job can change in this process
 *   (limits, priority, scheduling, CPUs) changed. When any of
 *   that fails, or this process can be traced or read by the jail's user (it is dumpable: not
 *   the execute-only copy), it sends no `R` and ends, and the jail ends with it.
 *
 * The waiter and every job it starts make no key (add_key, request_key, keyctl: a seccomp filter):
 * the jail's user is one kernel user in every jail, so a key was seen by every session's jails.
 */

import { NO_KEYS_PERL } from './no-keys-filter.ts'

/** The waiter; see the module comment. */
export const JOB_WAITER_SCRIPT = String.raw`
# No 'use warnings' or modules: each doubled Perl's start on a small VM.
use strict;
sub fail { print STDERR "eitri: $_[0]: $!\n"; exit($_[1] // 125) }
my $machine = '';
if (open(my $arch, '<', '/proc/sys/kernel/arch')) { $machine = <$arch> // ''; close $arch }
chomp $machine;
my %CALLS = (
  x86_64 => { setrlimit => 160, setsid => 112, prctl => 157, ioprio_get => 252, sched_getattr => 315, llistxattr => 195 },
  aarch64 => { setrlimit => 164, setsid => 157, prctl => 167, ioprio_get => 31, sched_getattr => 275, llistxattr => 12 },
);
my $call = $CALLS{$machine} or do { $! = 0; fail("this machine ($machine) is not one the waiter knows") };
# kill(-1) below must only ever reach the jail's own processes.
$$ == 1 or do { $! = 0; fail('the waiter must be the PID 1 of its jail') };
my %RESOURCE = (fsize => 1, data => 2, nproc => 6);
for my $word (@ARGV) {
  my ($name, $value) = $word =~ /\A--([a-z]+)=([0-9]+)\z/ or do { $! = 0; fail("unknown limit $word") };
  my $resource = $RESOURCE{$name} // do { $! = 0; fail("unknown limit $word") };
  syscall($call->{setrlimit}, $resource, pack('QQ', $value, $value)) == 0
    or fail("could not set the limit $word");
}
# What a job could change in this process and its next job would inherit.
sub own_state {
  my $state = '';
  for my $file ('/proc/self/limits', '/proc/self/status', '/proc/self/stat') {
    open(my $handle, '<', $file) or return undef;
    local $/;
    my $text = <$handle> // '';
    close $handle;
    if ($file eq '/proc/self/status') { $text = join '', grep { /^(Cpus|Mems)_allowed/ } split /^/, $text }
    if ($file eq '/proc/self/stat') { my @fields = split ' ', ($text =~ /\)\s(.*)\z/s)[0] // ''; $text = "@fields[15, 16, 37, 38]" }
    $state .= $text;
  }
  # Its whole scheduling (a custom slice, reset-on-fork, clamps), which the fields above miss.
  my $scheduling = "\0" x 56;
  syscall($call->{sched_getattr}, 0, $scheduling, 56, 0) == 0 or return undef;
  return $state . unpack('H*', $scheduling) . getpriority(0, 0) . ':' . syscall($call->{ioprio_get}, 1, 0);
}
# The jail's own writable folders and nodes, which outlive a job: their modes are put back, and
# the rest of them (owner, extended attributes, ACLs) must be as they were.
my @ROOTS = ('/tmp', '/dev/shm', '/dev/mqueue', '/dev/pts', '/dev/pts/ptmx');
sub root_state {
  my $path = $_[0];
  my @stat = lstat $path or return '';
  my $names = "\0" x 65536;
  my $length = syscall($call->{llistxattr}, $path, $names, length $names);
  return join ':', @stat[2, 4, 5], $length < 0 ? 'none' : unpack('H*', substr($names, 0, $length));
}
my %root_mode = map { $_ => ((lstat $_)[2] // 0) & 07777 } @ROOTS;
my %roots = map { $_ => root_state($_) } @ROOTS;
${NO_KEYS_PERL}
my $state = own_state() // fail('could not read its own state');
# Reused only while no job can trace it or read its memory (PR_GET_DUMPABLE).
my $reusable = syscall($call->{prctl}, 3, 0, 0, 0, 0) == 0;
pipe(my $wake_r, my $wake_w) or fail('could not make a pipe');
fcntl($wake_w, 4, 2048) or fail('could not make a pipe');
$SIG{CHLD} = sub { syswrite($wake_w, 'c') };
if (open(my $ready, '>&=', 4)) { syswrite($ready, 'R'); close $ready }

sub put {
  my $frame = $_[0] . pack('N', length $_[1]) . $_[1];
  while (length $frame) {
    my $wrote = syswrite(STDOUT, $frame);
    if (!defined $wrote) { next if ($! + 0) == 4; end_all() }
    substr($frame, 0, $wrote) = '';
  }
}
my $in = '';
my $control_open = 1;
sub fill {
  my $read = sysread(STDIN, $in, 65536, length $in);
  return 1 if !defined $read && ($! + 0) == 4;
  defined $read or fail('could not read the command');
  $control_open = 0 if $read == 0;
  return $read;
}
sub record {
  return () if length $in < 11;
  my ($type, $size) = (substr($in, 0, 1), substr($in, 1, 10));
  $size =~ /\A[0-9]{10}\z/ or do { $! = 0; fail('the command was not readable') };
  return () if length $in < 11 + $size;
  my $payload = substr($in, 11, $size);
  substr($in, 0, 11 + $size) = '';
  return ($type, $payload);
}
# Kills every process of the jail but this one, and reaps them; false if some keep coming.
sub sweep {
  for (1 .. 100) {
    my $signalled = kill('KILL', -1);
    while (waitpid(-1, 0) > 0) {}
    return 1 unless $signalled;
  }
  return 0;
}
sub end_all { sweep(); exit 0 }
sub empty {
  my ($folder, $budget) = @_;
  opendir(my $handle, $folder) or return 0;
  my @names = grep { $_ ne '.' && $_ ne '..' } readdir $handle;
  closedir $handle;
  for my $name (@names) {
    return 0 if --$$budget < 0;
    my $path = "$folder/$name";
    lstat $path or return 0;
    if (-d _) { chmod 0700, $path; empty($path, $budget) or return 0; rmdir $path or return 0 }
    else { unlink $path or return 0 }
  }
  return 1;
}
sub clean_ipc {
  for my $kind ('shm', 'sem', 'msg') {
    open(my $table, '<', "/proc/sysvipc/$kind") or next;
    my @lines = <$table>;
    close $table;
    shift @lines;
    for my $line (@lines) {
      my $id = (split ' ', $line)[1];
      my $gone = $kind eq 'shm' ? shmctl($id, 0, 0) : $kind eq 'sem' ? semctl($id, 0, 0, 0) : msgctl($id, 0, 0);
      return 0 unless $gone;
    }
  }
  return 1;
}
# What the next job may find: nothing of this one.
sub fresh {
  return 0 unless $reusable && $control_open;
  for my $root (@ROOTS) {
    my @now = lstat $root or next;
    ($now[2] & 07777) == $root_mode{$root} or chmod($root_mode{$root}, $root) or return 0;
  }
  my $budget = 10000;
  empty('/tmp', \$budget) && empty('/dev/shm', \$budget) && empty('/dev/mqueue', \$budget) && clean_ipc() or return 0;
  # Times a job set on them are gone too.
  utime(undef, undef, '/tmp', '/dev/shm', '/dev/mqueue') == 3 or return 0;
  for my $root (@ROOTS) { root_state($root) eq $roots{$root} or return 0 }
  return (own_state() // '') eq $state;
}
sub run_job {
  my @words = split /\0/, $_[0], -1;
  pop @words;
  my ($cwd, $count) = splice @words, 0, 2;
  defined $count && $count =~ /\A[0-9]+\z/ && @words > $count or do { $! = 0; fail('the command was not readable') };
  my @environment = splice @words, 0, $count;
  pipe(my $out_r, my $out_w) or fail('could not make a pipe');
  pipe(my $err_r, my $err_w) or fail('could not make a pipe');
  my $job = fork() // fail('could not start the command');
  if ($job == 0) {
    $SIG{CHLD} = 'DEFAULT';
    open(STDIN, '<', '/dev/null') or fail('could not open /dev/null');
    open(STDOUT, '>&', $out_w) or fail('could not set up stdout');
    open(STDERR, '>&', $err_w) or fail('could not set up stderr');
    syscall($call->{setsid}) >= 0 or fail('could not start a session');
    chdir $cwd or fail("could not enter $cwd", 1);
    %ENV = ();
    for my $entry (@environment) { my ($name, $value) = split /=/, $entry, 2; $ENV{$name} = $value }
    exec { $words[0] } @words;
    fail("failed to execute $words[0]", ($! + 0) == 2 ? 127 : 126);
  }
  close $out_w;
  close $err_w;
  my %open = (O => $out_r, E => $err_r);
  my ($status, $swept);
  while (%open || !defined $status) {
    my $wanted = '';
    vec($wanted, fileno($_), 1) = 1 for values %open;
    vec($wanted, fileno($wake_r), 1) = 1;
    vec($wanted, 0, 1) = 1 if $control_open;
    # Never without an end: Perl runs the SIGCHLD handler (the write to the wake pipe) only
    # after a call returns, so a job that ends just before the select would wake nothing, and
    # the jail would wait for ever (seen: the job a zombie, its pipes closed). Once its output
    # is closed, only its end is awaited: looked for every 50 ms.
    my $ready = select(my $got = $wanted, undef, undef, %open ? 1 : 0.05);
    if ($ready < 0) { next if ($! + 0) == 4; fail('could not wait for the command') }
    sysread($wake_r, my $ignored, 4096) if vec($got, fileno($wake_r), 1);
    while ((my $gone = waitpid(-1, 1)) > 0) { $status = $? if $gone == $job }
    if (defined $status && !$swept) { sweep() or end_all(); $swept = 1 }
    for my $type (sort keys %open) {
      next unless vec($got, fileno($open{$type}), 1);
      my $read = sysread($open{$type}, my $chunk, 65536);
      if (!defined $read) { next if ($! + 0) == 4; delete $open{$type} }
      elsif ($read == 0) { delete $open{$type} }
      else { put($type, $chunk) }
    }
    if (vec($got, 0, 1)) {
      fill() or end_all();
      while (my ($type, $payload) = record()) {
        next unless $type eq 'K' && $payload =~ /\A([0-9]{1,2})\z/;
        if ($1 == 9) { kill('KILL', -1) } else { kill($1, -$job) or kill($1, $job) }
      }
    }
  }
  return $status;
}
for (;;) {
  my ($type, $payload) = record();
  if (!defined $type) { fill() or end_all(); next }
  next unless $type eq 'C';
  put('X', run_job($payload));
  fresh() or end_all();
  put('R', '');
}
`
