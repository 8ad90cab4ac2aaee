/**
 * @module jail/overlay/layer-host-script
 * The layer host's program: a small Perl script that makes the mounts of a jail's layers in a
 * mount namespace of its own. Node cannot call `mount(2)`, util-linux 2.38's `mount` cannot
 * make an idmapped mount, and a program started per mount would cost a start per command; Perl
 * is part of every Debian system (`perl-base` is essential) and calls any system call by
 * number. A constant: paths reach it only as hex-encoded words on its input, never as code.
 *
 * Requests, one per line, words hex-encoded, answered `ok [words]` or `err message`; several
 * requests joined by ` ; ` on one line run in order and are answered once (the last one's
 * answer, or `err after N: message` for the first error, N the requests done before it):
 * - `bind SOURCE TARGET ro|rw`: a recursive bind (read-only: also nosuid, nodev), its
 *   attributes set before it is attached, so the copies that propagate into jails have them.
 * - `idbind SOURCE TARGET UID GID TO_UID TO_GID`: a bind on which files of UID/GID appear as
 *   TO_UID/TO_GID (the workspace's owner as the jail's user), through a user namespace made
 *   for it.
 * - `share TARGET`: TARGET bound onto itself and made shared, so what is later mounted on it
 *   reaches the jails that bound it (they are its slaves).
 * - `overlay LOWER UPPER WORK TARGET OPTIONS`: an overlay (UPPER and WORK empty: read-only).
 * - `umount TARGET`: lazily, with everything mounted below it. An overlay's file system ends
 *   (and syncs its upper layer's) only after the answer: the host holds each overlay it
 *   mounted open until then.
 * - `opaque XATTR DIR…`: `1` or `0` per folder, whether the overlay marked it opaque.
 * - `whiteout PATH…`: the overlay's mark of a deletion (a character device numbered 0, 0) at
 *   each path, for a layer the host builds (a fork's); since Linux 5.8 anyone may make one.
 *
 * A target is never reached through a link: each folder on its way is checked first, and the
 * host is the only one who writes where targets are (below its own temporary folder, or the
 * live workspace, where tools refuse links to eitri's own state).
 */
export const LAYER_HOST_SCRIPT = String.raw`
use strict; use warnings;
$| = 1;
my %NUMBERS = (
  x86_64 => { mount => 165, umount2 => 166, lgetxattr => 192, unshare => 272, mknodat => 259, close => 3, exit_group => 231 },
  aarch64 => { mount => 40, umount2 => 39, lgetxattr => 9, unshare => 97, mknodat => 33, close => 57, exit_group => 94 },
);
# The machine from the kernel, else from how perl was built: loading POSIX for uname would
# cost every layer host's start about 40 ms of CPU.
my $machine = '';
if (open(my $arch, '<', '/proc/sys/kernel/arch')) { $machine = <$arch> // ''; close $arch }
chomp $machine;
unless (length $machine) { no warnings 'once'; require Config; ($machine) = split /-/, $Config::Config{archname} }
my $nr = $NUMBERS{$machine};
unless ($nr) { print "unsupported this machine ($machine) is not one the layer host knows\n"; exit 2 }
my ($OPEN_TREE, $MOVE_MOUNT, $MOUNT_SETATTR) = (428, 429, 442);
my ($MS_NOSUID, $MS_NODEV, $MS_BIND, $MS_SHARED) = (2, 4, 4096, 1 << 20);
sub fail { die join(' ', @_) . ": $!\n" }
sub no_links {
  my ($target) = @_; my $at = '';
  for my $part (grep { length } split m{/}, $target) {
    $at .= "/$part";
    die "$at is a link, which is never followed\n" if -l $at;
  }
}
sub attach {
  # A detached copy of SOURCE gets its attributes before it is attached at TARGET, so every
  # copy propagated from it (into a running jail) has them too: a remount after attaching
  # would change this namespace's mount only.
  my ($source, $target, $attributes, $userns) = @_;
  no_links($target);
  my ($none1, $none2) = ('', '');
  my $tree = syscall($OPEN_TREE, -100, $source, 1 | 0x80000 | 0x8000);
  $tree >= 0 or fail("open_tree");
  if ($attributes) {
    my $attr = pack('QQQQ', $attributes, 0, 0, $userns // 0);
    syscall($MOUNT_SETATTR, $tree, $none1, 0x1000 | 0x8000, $attr, length $attr) == 0
      or fail('mount_setattr');
  }
  syscall($MOVE_MOUNT, $tree, $none2, -100, $target, 4) == 0 or fail("move_mount $target");
  syscall($nr->{close}, $tree);
}
sub bind_mount {
  my ($source, $target, $access) = @_;
  # MOUNT_ATTR_RDONLY | MOUNT_ATTR_NOSUID | MOUNT_ATTR_NODEV
  attach($source, $target, $access eq 'rw' ? 0 : 0x1 | 0x2 | 0x4);
}
sub idmapped_bind {
  my ($source, $target, $uid, $gid, $to_uid, $to_gid) = @_;
  no_links($target);
  pipe(my $reader, my $writer) or fail('pipe');
  my $child = fork // fail('fork');
  if ($child == 0) {
    close $writer;
    # exit_group, not exit: no END blocks or buffers of the parent's run twice.
    syscall($nr->{unshare}, 0x10000000) == 0 or syscall($nr->{exit_group}, 1);
    sysread($reader, my $byte, 1);
    syscall($nr->{exit_group}, 0);
  }
  close $reader;
  my $own = readlink('/proc/self/ns/user');
  for (1 .. 5000) {
    my $ns = readlink("/proc/$child/ns/user");
    last if defined $ns && $ns ne $own;
    select(undef, undef, undef, 0.001);
  }
  for (['uid_map', "$uid $to_uid 1\n"], ['setgroups', "deny\n"], ['gid_map', "$gid $to_gid 1\n"]) {
    open(my $map, '>', "/proc/$child/$_->[0]") or fail("open $_->[0]");
    print $map $_->[1];
    close $map or fail("write $_->[0]");
  }
  open(my $ns, '<', "/proc/$child/ns/user") or fail('user namespace');
  # MOUNT_ATTR_IDMAP, no set-user-id programs, no devices
  attach($source, $target, 0x00100000 | 0x2 | 0x4, fileno($ns));
  syswrite($writer, 'x');
  close $writer;
  waitpid($child, 0);
}
# Overlays mounted here, held open by target; and those unmounted, closed after the answer.
my (%held, @closing);
my %requests = (
  bind => sub { bind_mount(@_); '' },
  idbind => sub { idmapped_bind(@_); '' },
  share => sub {
    no_links($_[0]);
    syscall($nr->{mount}, $_[0], $_[0], 0, $MS_BIND, 0) == 0 or fail("bind $_[0]");
    syscall($nr->{mount}, 0, $_[0], 0, $MS_SHARED, 0) == 0 or fail('share');
    '';
  },
  overlay => sub {
    my ($lower, $upper, $work, $target, $options) = @_;
    no_links($target);
    my $data = length $upper ? "lowerdir=$lower,upperdir=$upper,workdir=$work" : "lowerdir=$lower";
    $data .= ",$options" if length $options;
    my ($source, $type) = ('overlay', 'overlay');
    syscall($nr->{mount}, $source, $target, $type, $MS_NOSUID | $MS_NODEV, $data) == 0
      or fail("overlay on $target");
    # Held open, so its unmount detaches it at once and the end of its file system (which
    # syncs the upper layer's file system: milliseconds) waits until after the answer.
    if (opendir(my $handle, $target)) { $held{$target} = $handle }
    '';
  },
  umount => sub {
    syscall($nr->{umount2}, $_[0], 2) == 0 or fail("umount $_[0]");
    my $handle = delete $held{$_[0]};
    push @closing, $handle if $handle;
    '';
  },
  opaque => sub {
    my ($name, @folders) = @_;
    join(' ', map {
      my $value = "\0" x 4;
      my $length = syscall($nr->{lgetxattr}, $_, $name, $value, 4);
      $length == 1 && substr($value, 0, 1) eq 'y' ? 1 : 0;
    } @folders);
  },
  whiteout => sub {
    for my $path (@_) {
      no_links($path);
      # S_IFCHR, device 0: the overlay reads it as "nothing here", hiding what lies below.
      syscall($nr->{mknodat}, -100, $path, 0020000, 0) == 0 or fail("whiteout $path");
    }
    '';
  },
);
print "ready\n";
while (my $line = <STDIN>) {
  chomp $line;
  # Requests joined by ' ; ' run in order, answered once: the last one's answer, or the first
  # error (and the rest not run).
  my @groups = split / ; /, $line;
  my $done = 0;
  my $answer = eval {
    my $last = '';
    for my $group (@groups) {
      my ($request, @words) = map { pack('H*', $_) } split / /, $group;
      my $handler = $requests{$request // ''} or die "unknown request\n";
      $last = $handler->(@words);
      $done++;
    }
    $last;
  };
  if ($@) {
    (my $message = $@) =~ s/\s+/ /g;
    $message =~ s/ $//;
    print @groups > 1 ? "err after $done: $message\n" : "err $message\n";
  }
  else { print length $answer ? "ok $answer\n" : "ok\n" }
  closedir($_) for splice(@closing);
}
`
