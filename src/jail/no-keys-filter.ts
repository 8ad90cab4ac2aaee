/**
 * @module jail/no-keys-filter
 * No kernel keys in a jail (decision 0043): the jail's user is one kernel user in every jail
 * (`nobody` for a root caller, the caller otherwise), and keys are checked by that user, not by
 * namespace, so a key one command made (its description, and its payload if it lets its user
 * read it) was there for every later command and every other session's jails. Every jail's
 * PID 1 (the reaper of jail-reaper.ts, the job waiter of job-waiter-script.ts) installs a
 * seccomp filter on itself before it starts anything, so everything in the jail inherits it
 * and nothing can lift it (no_new_privs is set by bubblewrap): `add_key`, `request_key` and
 * `keyctl` answer ENOSYS, as on a kernel without keys; another ABI's calls (i386 `int 0x80`,
 * x32) are refused outright, so no other number reaches the same calls.
 */

/**
 * A Perl block that installs the filter, or ends the process with status 125 and a message
 * (fail closed: nothing runs without it). Needs no module; knows x86_64 and aarch64.
 */
export const NO_KEYS_PERL = String.raw`
{
  # x86_64 and aarch64: the audit architecture, prctl, then add_key, request_key, keyctl.
  my %KEYS = (x86_64 => [0xc000003e, 157, 248, 249, 250], aarch64 => [0xc00000b7, 167, 217, 218, 219]);
  my $machine = '';
  if (open(my $arch, '<', '/proc/sys/kernel/arch')) { $machine = <$arch> // ''; close $arch }
  chomp $machine;
  my ($audit, $prctl, @keys) = @{ $KEYS{$machine} // do { print STDERR "eitri: this machine ($machine) is not one the jail knows\n"; exit 125 } };
  my $filter = join '', map { pack('SCCL', @$_) } (
    [0x20, 0, 0, 4], [0x15, 1, 0, $audit], [0x06, 0, 0, 0x50026],
    [0x20, 0, 0, 0], [0x35, 4, 0, 0x40000000],
    (map { [0x15, 3 - $_, 0, $keys[$_]] } 0 .. 2),
    [0x06, 0, 0, 0x7fff0000], [0x06, 0, 0, 0x50026],
  );
  syscall($prctl, 22, 2, pack('Sx6P', length($filter) / 8, $filter), 0, 0) == 0
    or do { print STDERR "eitri: the jail could not refuse the key calls: $!\n"; exit 125 };
}
`
