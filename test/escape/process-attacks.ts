/**
 * Attacks on the host's processes, terminal, descriptors and environment.
 */
import fs from 'node:fs'
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import {
  alive,
  brief,
  killAll,
  processesWith,
  quote,
  sleep,
  spawnPlain,
  splitWord,
  startCanaryProcess,
  STARTED,
  waitFor,
  type Attack,
} from './helpers.ts'

/** Opens the controlling terminal and pushes text into its input queue with TIOCSTI. */
const TTY_INJECTOR = `
import fcntl, os, sys, termios
fds = []
try:
    fds.append(os.open('/dev/tty', os.O_RDWR))
    print('TTY-OPEN', flush=True)
except OSError as error:
    print('no /dev/tty:', error, flush=True)
fds += [fd for fd in (0, 1, 2) if os.isatty(fd)]
for fd in fds:
    try:
        for byte in sys.argv[1].encode():
            fcntl.ioctl(fd, termios.TIOCSTI, bytes([byte]))
        print('INJECTED', flush=True)
        break
    except OSError as error:
        print('TIOCSTI refused:', error, flush=True)
`

/** Runs argv under a new pseudo-terminal (its controlling terminal) and prints what it showed. */
const PTY_DRIVER = `
import os, pty, select, sys, time
pid, fd = pty.fork()
if pid == 0:
    os.execvp(sys.argv[1], sys.argv[1:])
out = b''
deadline = time.time() + 25
while time.time() < deadline:
    ready, _, _ = select.select([fd], [], [], 0.1)
    if ready:
        try:
            data = os.read(fd, 65536)
        except OSError:
            break
        if not data:
            break
        out += data
try:
    os.kill(pid, 9)
except OSError:
    pass
os.waitpid(pid, 0)
sys.stdout.write(out.decode('utf8', 'replace'))
`

/** Attaches to a pid with ptrace and says whether it worked; detaches again. */
const PTRACE_ATTACH = `
import ctypes, os, sys
libc = ctypes.CDLL(None, use_errno=True)
pid = int(sys.argv[1])
rc = libc.ptrace(16, pid, ctypes.c_void_p(0), ctypes.c_void_p(0))
print('ATTACHED' if rc == 0 else 'attach refused, errno %d' % ctypes.get_errno(), flush=True)
if rc == 0:
    os.waitpid(pid, 0)
    libc.ptrace(17, pid, ctypes.c_void_p(0), ctypes.c_void_p(0))
`

/** Takes fd 1 of the pid given (pidfd_getfd) and writes the supervisor's replies to it. */
const FORGE_REPLY = `
import ctypes, json, os, sys
libc = ctypes.CDLL(None, use_errno=True)
fd = libc.syscall(438, os.pidfd_open(int(sys.argv[1])), 1, 0)
if fd < 0:
    print('pidfd_getfd refused, errno', ctypes.get_errno(), flush=True)
    sys.exit()
for id in range(1, 50):
    reply = {'id': id, 'exitCode': 0, 'signal': None, 'stdout': 'forged', 'stderr': ''}
    os.write(fd, (json.dumps(reply) + '\\n').encode())
print('forged', flush=True)
`

const JAIL_IN_TERMINAL = fileURLToPath(new URL('./jail-in-terminal.ts', import.meta.url))

export const processAttacks: readonly Attack[] = [
  {
    id: 3,
    name: 'a nested user namespace, then a mount',
    callers: ['root', 'unprivileged'],
    async run(ctx) {
      const word = splitWord(ctx.marker)
      const script = `unshare -Urm sh -c 'mount -t tmpfs x /tmp && echo mounted' && echo ${word}; unshare -U true && echo ${word}`
      const jailed = await ctx.jailed(script)
      const plain = await ctx.plain(`unshare -Ur true && echo ${word}`)
      return {
        control: plain.stdout.includes(ctx.marker),
        jailed: jailed.stdout.includes(ctx.marker),
        detail: `jailed stderr: ${brief(jailed.stderr)}`,
      }
    },
  },
  {
    id: 16,
    name: 'host processes: /proc listing, cmdline, environ, kill -9 -1, pkill -f',
    callers: ['root', 'unprivileged'],
    async run(ctx) {
      const canary = startCanaryProcess(ctx.marker)
      ctx.defer(() => canary.stop())
      await waitFor(() => processesWith(ctx.marker).length > 0, 5000)
      const spy = `ls /proc | tr '\\n' ' '; for f in /proc/[0-9]*/cmdline; do tr '\\0' ' ' < "$f"; echo; done; cat /proc/${canary.pid}/environ /proc/${canary.pid}/cmdline`
      const kill = `kill -9 ${canary.pid}; pkill -9 -f ${splitWord(ctx.marker)}; kill -9 -1`
      const outputs = [
        await ctx.jailed(`${spy}; ${kill}`, { fresh: true }),
        await ctx.jailed(spy),
        await ctx.jailed(kill, { expectStart: false }),
      ].map((result) => result.stdout + result.stderr)
      await sleep(200)
      const seen = outputs.some((output) => output.includes(ctx.marker))
      const survived = alive(canary.pid)
      await ctx.plain(`pkill -9 -f ${splitWord(ctx.marker)}`)
      return {
        control: await waitFor(() => !alive(canary.pid), 3000),
        jailed: seen || !survived,
        detail: `marker seen in the jail: ${seen}; canary survived: ${survived}; the jail's /proc: ${brief(outputs[0] ?? '', 120)}`,
      }
    },
  },
  {
    id: 17,
    name: 'ptrace attach to a host process of the same user',
    callers: ['root', 'unprivileged'],
    async run(ctx) {
      const canary = startCanaryProcess(ctx.marker)
      ctx.defer(() => canary.stop())
      const script = `python3 -c ${quote(PTRACE_ATTACH)} ${canary.pid} 2>&1`
      const jailed = await ctx.jailed(script)
      const plain = await ctx.plain(script)
      return {
        control: plain.stdout.includes('ATTACHED'),
        jailed: jailed.stdout.includes('ATTACHED'),
        detail: `jailed: ${brief(jailed.stdout.replace(STARTED, ''))}; control: ${brief(plain.stdout)}`,
      }
    },
  },
  {
    id: 18,
    name: 'TIOCSTI keystroke injection into the controlling terminal',
    callers: ['root', 'unprivileged'],
    async run(ctx) {
      const canary = path.join(ctx.outside, 'injected')
      const env = { EITRI_TTY_INJECTOR: TTY_INJECTOR, EITRI_TTY_TEXT: `touch ${quote(canary)}\n` }
      // The terminal's shell runs the injector, then reads a line as an interactive shell would.
      const underTerminal = (command: string) =>
        spawnPlain(
          `python3 -c ${quote(PTY_DRIVER)} /bin/bash --norc --noprofile -c ${quote(`${command}; read -t 2 line && eval "$line"`)}`,
          { env, cwd: ctx.workspace, timeoutMs: 30_000 },
        )
      const resultFile = path.join(ctx.outside, 'jailed-output')
      await underTerminal(
        `${quote(process.execPath)} ${quote(JAIL_IN_TERMINAL)} ${quote(ctx.workspace)} ${quote(resultFile)}`,
      )
      const jailedOutput = fs.readFileSync(resultFile, 'utf8')
      const jailedReached = fs.existsSync(canary) || /TTY-OPEN|INJECTED/.test(jailedOutput)
      const plain = await underTerminal('python3 -c "$EITRI_TTY_INJECTOR" "$EITRI_TTY_TEXT"')
      const injected = fs.existsSync(canary)
      // Where the kernel forbids TIOCSTI for everyone (dev.tty.legacy_tiocsti=0 and no
      // CAP_SYS_ADMIN), the control cannot inject; then what it proves is that it has a
      // terminal to inject into, and the jail does not.
      const control = injected || /TTY-OPEN/.test(plain.stdout)
      return {
        control,
        jailed: jailedReached,
        detail: `control ${injected ? 'injected a command that ran' : `could not inject, but opened its terminal: ${/TTY-OPEN/.test(plain.stdout)}`}; jailed: ${brief(jailedOutput)}`,
      }
    },
  },
  {
    id: 19,
    name: 'orphans (setsid, nohup, double fork, a forged end) surviving a run',
    callers: ['root', 'unprivileged'],
    async run(ctx) {
      const name = (suffix: string) => `${splitWord(ctx.marker)}-${suffix}`
      const orphans = (suffix: string) =>
        `setsid bash -c "exec -a ${name(suffix)}-setsid sleep 1000" & nohup bash -c "exec -a ${name(suffix)}-nohup sleep 1000" >/dev/null 2>&1 & (bash -c "exec -a ${name(suffix)}-double sleep 1000" &); sleep 30`
      // A command that answers for the warm jail's supervisor (whose reply channel it can take
      // with pidfd_getfd: same user), so the host's run returns while it keeps running.
      const forged = `python3 -c ${quote(FORGE_REPLY)} "$(pgrep -f '^/opt/eitri/node')"; exec -a ${name('forged')} sleep 1000`
      const runs = [
        { kind: 'warm', script: orphans('warm'), fresh: false, timeoutMs: 500 },
        { kind: 'fresh', script: orphans('fresh'), fresh: true, timeoutMs: 500 },
        { kind: 'forged', script: forged, fresh: false, timeoutMs: 3000 },
      ]
      const survivors: string[] = []
      let said = ''
      for (const { kind, script, fresh, timeoutMs } of runs) {
        const started = performance.now()
        // A forged answer replaces the command's output, the start marker with it.
        const result = await ctx.jailed(script, {
          fresh,
          timeoutMs,
          expectStart: kind !== 'forged',
        })
        // Killed processes may take a moment to exit; a survivor is still there a second later.
        await waitFor(() => processesWith(ctx.marker).length === 0, 1000)
        const left = processesWith(ctx.marker)
        if (performance.now() - started > 20_000) survivors.push(`${kind}: no deadline`)
        if (left.length > 0) survivors.push(`${left.length} (${kind})`)
        if (kind === 'forged') said = brief(result.stdout + result.stderr, 80)
        killAll(left)
      }
      await ctx.plain(orphans('plain'), { killChildAfterMs: 500 })
      await sleep(200)
      const plain = processesWith(ctx.marker)
      killAll(plain)
      return {
        control: plain.length >= 3,
        jailed: survivors.length > 0,
        detail: `jailed survivors: ${survivors.join(', ') || 'none'} (the forging command's run answered: ${said}); plain survivors: ${plain.length}`,
      }
    },
  },
  {
    id: 20,
    name: 'an inherited descriptor without close-on-exec',
    callers: ['root', 'unprivileged'],
    async run(ctx) {
      const file = process.env.EITRI_ESCAPE_FD_CANARY
      const fd = Number(process.env.EITRI_ESCAPE_FD ?? 'NaN')
      if (file === undefined || !Number.isInteger(fd))
        throw new Error(
          'start the runner with EITRI_ESCAPE_FD_CANARY, and that file at fd EITRI_ESCAPE_FD',
        )
      const flags = /^flags:\s+([0-7]+)/m.exec(
        fs.readFileSync(`/proc/self/fdinfo/${fd}`, 'utf8'),
      )?.[1]
      if ((Number.parseInt(flags ?? '0', 8) & 0o2000000) !== 0)
        throw new Error(`fd ${fd} is close-on-exec already: the attack would prove nothing`)
      // Runs first, before any jail closed the descriptor.
      await ctx.plain(`echo pwned-plain >&${fd}`)
      const control = fs.readFileSync(file, 'utf8').includes('pwned-plain')
      const warm = await ctx.jailed(`ls -l /proc/self/fd; echo pwned-jail >&${fd}`)
      const fresh = await ctx.jailed(`echo pwned-jail >&${fd}`, { fresh: true })
      return {
        control,
        jailed: fs.readFileSync(file, 'utf8').includes('pwned-jail'),
        detail: `jailed fds: ${brief(warm.stdout.replace(STARTED, ''), 200)}; ${brief(warm.stderr + fresh.stderr, 200)}`,
      }
    },
  },
  {
    id: 21,
    name: 'secrets in the host environment',
    callers: ['root', 'unprivileged'],
    async run(ctx) {
      const secrets = ['EITRI_ESCAPE_TOKEN', 'AWS_SECRET_ACCESS_KEY', 'GITHUB_TOKEN'].map(
        (name) => ({ name, value: process.env[name] ?? '' }),
      )
      if (secrets.some((secret) => secret.value === ''))
        throw new Error(
          'the runner needs EITRI_ESCAPE_TOKEN, AWS_SECRET_ACCESS_KEY and GITHUB_TOKEN set',
        )
      const leaks = (text: string) =>
        secrets.filter((secret) => text.includes(secret.value) || text.includes(`${secret.name}=`))
      const jailed = [await ctx.jailed('env'), await ctx.jailed('env', { fresh: true })]
      const leaked = jailed.flatMap((result) => leaks(result.stdout))
      const plain = await ctx.plain('env')
      return {
        control: leaks(plain.stdout).length === secrets.length,
        jailed: leaked.length > 0,
        detail: `leaked: ${leaked.map((secret) => secret.name).join(', ') || 'nothing'}`,
      }
    },
  },
  {
    id: 22,
    name: "secrets in argv: the host's /proc/*/cmdline (bubblewrap's too) while a jail runs",
    callers: ['root', 'unprivileged'],
    async run(ctx) {
      const token = process.env.EITRI_ESCAPE_TOKEN ?? ''
      if (token === '') throw new Error('the runner needs EITRI_ESCAPE_TOKEN set')
      const found = new Set<string>()
      let sawJail = false
      const scan = () => {
        for (const name of fs.readdirSync('/proc').filter((entry) => /^\d+$/.test(entry))) {
          try {
            const cmdline = fs.readFileSync(`/proc/${name}/cmdline`, 'utf8')
            if (cmdline.includes(token)) found.add(`${name} argv`)
            const ours = cmdline.includes(ctx.marker)
            sawJail ||= ours
            if (
              (ours || cmdline.split('\0')[0]?.endsWith('bwrap') === true) &&
              fs.readFileSync(`/proc/${name}/environ`, 'utf8').includes(token)
            )
              found.add(`${name} environment`)
          } catch {
            // gone, or not ours to read
          }
        }
      }
      const program = `exec -a ${splitWord(ctx.marker)} sleep 2`
      const job = await ctx.jail.start({
        command: ['/bin/bash', '-c', program],
        access: 'workspace-write',
      })
      const warm = ctx.jailed(`${program} & wait`)
      for (let i = 0; i < 20; i++, await sleep(50)) scan()
      job.process.kill()
      await Promise.all([job.finished, warm])
      if (!sawJail) throw new Error('never saw the jailed program while scanning')
      const jailedFound = [...found]
      found.clear()
      const plain = ctx.plain('bash -c "sleep 1; true" "$EITRI_ESCAPE_TOKEN"')
      for (let i = 0; i < 10 && found.size === 0; i++, await sleep(50)) scan()
      await plain
      return {
        control: found.size > 0,
        jailed: jailedFound.length > 0,
        detail: `token found while jailed: ${jailedFound.join(', ') || 'nowhere'}`,
      }
    },
  },
]
