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
 * x32) are refused outright, so no other number reaches the same calls. The same filter keeps
 * programs to the socket families the jail's network namespace scopes (AF_VSOCK reached the
 * hypervisor from a jail with no network) and refuses io_uring, whose requests make sockets
 * without the `socket` call (attack pass w/atkjail2). Where no reaper can run
 * (no execute-only copy of Perl: a `noexec` temporary folder), bubblewrap installs the same
 * program (`--seccomp`, {@link noKeysProgram}) on its own PID 1 and the command (decision 0044).
 *
 * One definition of the filter ({@link filterOf}) gives both: the bytes bubblewrap reads, and the
 * instructions written into the Perl block.
 */

/** One classic BPF instruction (`struct sock_filter`): code, jump if true, jump if false, k. */
type Instruction = readonly [code: number, ifTrue: number, ifFalse: number, k: number]

/** The calls the filter names on one architecture. */
interface KeyCalls {
  /** The kernel's machine name (`/proc/sys/kernel/arch`). */
  readonly machine: string
  /** `AUDIT_ARCH_*`: the ABI a call comes through. */
  readonly audit: number
  readonly prctl: number
  /** add_key, request_key, keyctl. */
  readonly keys: readonly [number, number, number]
  /** io_uring_setup, io_uring_enter, io_uring_register. */
  readonly rings: readonly [number, number, number]
  /** socket, socketpair: their first argument is the address family. */
  readonly sockets: readonly [number, number]
}

/** By Node's `process.arch`: x86_64 and aarch64. */
const KEY_CALLS: Readonly<Record<string, KeyCalls>> = {
  x64: {
    machine: 'x86_64',
    audit: 0xc000003e,
    prctl: 157,
    keys: [248, 249, 250],
    rings: [425, 426, 427],
    sockets: [41, 53],
  },
  arm64: {
    machine: 'aarch64',
    audit: 0xc00000b7,
    prctl: 167,
    keys: [217, 218, 219],
    rings: [425, 426, 427],
    sockets: [198, 199],
  },
}

/**
 * The address families a jailed program may open a socket of: those the jail's own network
 * namespace scopes (AF_UNIX, AF_INET, AF_INET6, AF_NETLINK). Every other family answers
 * EAFNOSUPPORT, as on a kernel built without it: AF_VSOCK reaches the hypervisor's services
 * (and a VM's other guests) whatever the network namespace, and the rest are kernel code no
 * program of a workspace needs (jail-attack-classes §13).
 */
export const JAIL_SOCKET_FAMILIES: readonly number[] = [1, 2, 10, 16]

/** `SECCOMP_RET_ERRNO | ENOSYS`. */
const ANSWER_ENOSYS = 0x50026
/** `SECCOMP_RET_ALLOW`. */
const ALLOW = 0x7fff0000
/** x32 calls carry this bit in their number. */
const X32_SYSCALL_BIT = 0x40000000

/** `SECCOMP_RET_ERRNO | EAFNOSUPPORT`. */
const ANSWER_EAFNOSUPPORT = 0x50061

/**
 * The filter: another ABI's calls, the key calls and io_uring's (whose requests would make
 * sockets and more without passing this filter) answer ENOSYS; a socket of a family not in
 * {@link JAIL_SOCKET_FAMILIES} answers EAFNOSUPPORT; everything else passes.
 */
function filterOf(calls: KeyCalls): Instruction[] {
  const refused = [...calls.keys, ...calls.rings]
  // Where the verdicts sit: ALLOW, then ENOSYS, then the family check.
  const allow = 5 + refused.length + calls.sockets.length
  const families = JAIL_SOCKET_FAMILIES
  return [
    // Load seccomp_data.arch; another ABI: ENOSYS.
    [0x20, 0, 0, 4],
    [0x15, 1, 0, calls.audit],
    [0x06, 0, 0, ANSWER_ENOSYS],
    // Load seccomp_data.nr; an x32 number: ENOSYS.
    [0x20, 0, 0, 0],
    [0x35, allow - 4, 0, X32_SYSCALL_BIT],
    ...refused.map((call, index): Instruction => [0x15, allow - 5 - index, 0, call]),
    ...calls.sockets.map((call, index): Instruction => [
      0x15,
      1 + calls.sockets.length - index,
      0,
      call,
    ]),
    [0x06, 0, 0, ALLOW],
    [0x06, 0, 0, ANSWER_ENOSYS],
    // A socket call: load the low half of its first argument (the family; an int).
    [0x20, 0, 0, 16],
    ...families.map((family, index): Instruction => [0x15, families.length - index, 0, family]),
    [0x06, 0, 0, ANSWER_EAFNOSUPPORT],
    [0x06, 0, 0, ALLOW],
  ]
}

/**
 * The filter as bubblewrap's `--seccomp FD` reads it (`struct sock_filter` in the machine's
 * order, little-endian on both): for this machine, or undefined on one the jail does not know.
 */
export function noKeysProgram(arch: string = process.arch): Buffer | undefined {
  const calls = KEY_CALLS[arch]
  if (calls === undefined) return undefined
  const instructions = filterOf(calls)
  const program = Buffer.alloc(instructions.length * 8)
  instructions.forEach(([code, ifTrue, ifFalse, k], index) => {
    program.writeUInt16LE(code, index * 8)
    program.writeUInt8(ifTrue, index * 8 + 2)
    program.writeUInt8(ifFalse, index * 8 + 3)
    program.writeUInt32LE(k, index * 8 + 4)
  })
  return program
}

/** Each machine's prctl number and filter, as a Perl hash's entries. */
const PERL_FILTERS = Object.values(KEY_CALLS)
  .map((calls) => {
    const instructions = filterOf(calls).map((instruction) => `[${instruction.join(', ')}]`)
    return `${calls.machine} => [${calls.prctl}, [${instructions.join(', ')}]]`
  })
  .join(',\n    ')

/**
 * A Perl block that installs the filter, or ends the process with status 125 and a message
 * (fail closed: nothing runs without it). Needs no module; knows x86_64 and aarch64.
 */
export const NO_KEYS_PERL = String.raw`
{
  # Each machine's prctl, then the filter (no-keys-filter.ts).
  my %FILTERS = (
    ${PERL_FILTERS}
  );
  my $machine = '';
  if (open(my $arch, '<', '/proc/sys/kernel/arch')) { $machine = <$arch> // ''; close $arch }
  chomp $machine;
  my ($prctl, $program) = @{ $FILTERS{$machine} // do { print STDERR "eitri: this machine ($machine) is not one the jail knows\n"; exit 125 } };
  my $filter = join '', map { pack('SCCL', @$_) } @$program;
  syscall($prctl, 22, 2, pack('Sx6P', length($filter) / 8, $filter), 0, 0) == 0
    or do { print STDERR "eitri: the jail could not refuse the key calls: $!\n"; exit 125 };
}
`
