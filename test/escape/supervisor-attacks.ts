/**
 * Attacks on what eitri trusts inside a jail: the warm jail's supervisor and bubblewrap's PID 1
 * (which the kill of a command's stragglers spares) run as the same user as the commands, so
 * only their being non-dumpable keeps a command from tracing them or writing their memory, and
 * with it every later command of the session (decision 0036).
 */
import { brief, quote, STARTED, type Attack } from './helpers.ts'

/**
 * Tries `/proc/PID/mem` read-write and `PTRACE_SEIZE` on the warm jail's supervisor (the
 * process running /opt/eitri/node) and on PID 1, and, as the control, on a process this command
 * started itself: the same user and dumpable, so the kernel lets it in unless the jail forbids
 * tracing.
 */
const SEIZE = `
import ctypes, os, subprocess
libc = ctypes.CDLL(None, use_errno=True)
PTRACE_SEIZE = 0x4206
def cmdline(pid):
    try:
        return open('/proc/%d/cmdline' % pid, 'rb').read()
    except OSError:
        return b''
def attack(pid):
    said = []
    try:
        open('/proc/%d/mem' % pid, 'r+b', buffering=0).close()
        said.append('MEM-WRITABLE')
    except OSError as error:
        said.append('mem refused errno %d' % error.errno)
    if libc.ptrace(PTRACE_SEIZE, pid, None, None) == 0:
        said.append('SEIZED')
    else:
        said.append('seize refused errno %d' % ctypes.get_errno())
    return ' '.join(said)
own = subprocess.Popen(['sleep', '30'])
print('own child:', attack(own.pid), flush=True)
own.kill()
supervisors = [int(p) for p in os.listdir('/proc') if p.isdigit() and cmdline(int(p)).startswith(b'/opt/eitri/node')]
print('supervisors found:', len(supervisors), flush=True)
for pid in supervisors:
    print('supervisor %d:' % pid, attack(pid), flush=True)
print('pid 1:', attack(1), flush=True)
`

export const supervisorAttacks: readonly Attack[] = [
  {
    id: 17,
    name: "ptrace and /proc/PID/mem of the warm jail's supervisor and PID 1",
    callers: ['root', 'unprivileged'],
    async run(ctx) {
      // Twice: the first may be the cold start beside which the warm jail starts.
      await ctx.jailed('true')
      const jailed = await ctx.jailed(`python3 -c ${quote(SEIZE)} 2>&1`)
      const output = jailed.stdout.replace(STARTED, '')
      const own = /own child: (.*)/.exec(output)?.[1] ?? ''
      const supervisors = [...output.matchAll(/supervisor \d+: (.*)/g)].map((match) => match[1])
      const pid1 = /pid 1: (.*)/.exec(output)?.[1] ?? ''
      if (pid1 === '') throw new Error(`the command did not attack PID 1: ${brief(output)}`)
      if (supervisors.length === 0)
        throw new Error(`the command found no supervisor to attack: ${brief(output)}`)
      return {
        control: own.includes('MEM-WRITABLE') && own.includes('SEIZED'),
        jailed: [...supervisors, pid1].some((said) => /MEM-WRITABLE|SEIZED/.test(said ?? '')),
        detail: brief(output, 400),
      }
    },
  },
]
