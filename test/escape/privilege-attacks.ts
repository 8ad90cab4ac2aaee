/**
 * Attacks on privileges, devices, SysV IPC and resources.
 */
import fs from 'node:fs'
import path from 'node:path'
import { brief, quote, spawnPlain, STARTED, type Attack } from './helpers.ts'
import { OUTPUT_MARKER_ROOM } from '../../src/util/output-window.mjs'

/** Forks up to N sleeping children, prints how many it got, then ends them all. */
const FORKER = `
import os, sys, time, signal
kids = []
for _ in range(int(sys.argv[1])):
    try:
        pid = os.fork()
    except OSError:
        break
    if pid == 0:
        time.sleep(10)
        os._exit(0)
    kids.append(pid)
print('FORKED', len(kids), flush=True)
for pid in kids:
    os.kill(pid, signal.SIGKILL)
    os.waitpid(pid, 0)
`

/** Host device nodes a jail must not show; the control needs at least one to exist. */
const HOST_DEVICES = [
  '/dev/vda',
  '/dev/sda',
  '/dev/nvme0n1',
  '/dev/xvda',
  '/dev/mem',
  '/dev/kmem',
  '/dev/port',
  '/dev/kmsg',
  '/dev/loop0',
  '/dev/loop-control',
  '/dev/tty0',
  '/dev/tty1',
  '/dev/fuse',
  '/dev/kvm',
]

export const privilegeAttacks: readonly Attack[] = [
  {
    id: 23,
    name: 'capabilities, no_new_privs and privileged operations',
    callers: ['root', 'unprivileged'],
    async run(ctx) {
      const script = [
        "grep -E '^(Cap[A-Za-z]+|NoNewPrivs)' /proc/self/status",
        'touch /tmp/f; chown 0:0 /tmp/f && echo PRIVILEGED chown',
        'mkdir -p /tmp/m; mount -t tmpfs x /tmp/m && echo PRIVILEGED mount',
        'setpriv --reuid=0 true && echo PRIVILEGED setpriv',
        'su -c true </dev/null && echo PRIVILEGED su',
        'unshare -r true && echo PRIVILEGED unshare',
      ].join('; ')
      const job = async (access: 'read-only' | 'workspace-write') => {
        const started = await ctx.jail.start({
          command: ['/bin/bash', '-c', script],
          access,
        })
        return (await started.finished).stdout
      }
      // Every kind of jail: the warm one of each access, a cold start, and background jobs one
      // after another (the second may run in a jail started ahead that ran the first).
      const outputs = {
        warm: (await ctx.jailed(script)).stdout,
        'warm read-only': (await ctx.jailed(script, { access: 'read-only' })).stdout,
        cold: (await ctx.jailed(script, { fresh: true })).stdout,
        'background job': await job('workspace-write'),
        'next background job': await job('workspace-write'),
        'read-only background job': await job('read-only'),
      }
      const held = (text: string): boolean =>
        (text.match(/^Cap(Inh|Prm|Eff|Bnd|Amb):\s+0{16}$/gm)?.length ?? 0) === 5 &&
        /^NoNewPrivs:\s+1$/m.test(text) &&
        !text.includes('PRIVILEGED')
      const broken = Object.entries(outputs).filter(([, text]) => !held(text))
      const mountPoint = path.join(ctx.outside, 'mnt')
      fs.mkdirSync(mountPoint)
      const plain = await ctx.plain(
        `unshare -Urm sh -c 'grep CapEff /proc/self/status; mount -t tmpfs x "$1" && echo MOUNTED' sh ${quote(mountPoint)}`,
      )
      return {
        control: /CapEff:\s+0*[1-9a-f]/.test(plain.stdout) && plain.stdout.includes('MOUNTED'),
        jailed: broken.length > 0,
        detail: `${broken.map(([kind, text]) => `${kind}: ${brief(text.replace(STARTED, ''), 200)}`).join('; ') || 'no capability, no_new_privs set and nothing privileged in any kind of jail'}`,
      }
    },
  },
  {
    id: 24,
    name: 'special files: host devices and mknod',
    callers: ['root', 'unprivileged'],
    async run(ctx) {
      const listing = `ls /dev | tr '\\n' ' '; for d in ${HOST_DEVICES.join(' ')}; do [ -e $d ] && echo "PRESENT $d"; done`
      const jailed = await ctx.jailed(
        `${listing}; (mknod /tmp/disk b 254 0 || mknod disk b 8 0) 2>/dev/null && echo MKNOD-OK`,
      )
      const plain = await ctx.plain(listing)
      return {
        control: plain.stdout.includes('PRESENT'),
        jailed: /PRESENT|MKNOD-OK/.test(jailed.stdout),
        detail: `jail's /dev: ${brief(jailed.stdout.replace(STARTED, ''), 200)}`,
      }
    },
  },
  {
    id: 25,
    name: 'host SysV IPC: a shared memory segment and a message queue',
    callers: ['root', 'unprivileged'],
    async run(ctx) {
      const shared = /id:\s*(\d+)/.exec((await spawnPlain('ipcmk -M 4096')).stdout)?.[1]
      const queue = /id:\s*(\d+)/.exec((await spawnPlain('ipcmk -Q')).stdout)?.[1]
      if (shared === undefined || queue === undefined) throw new Error('ipcmk failed on the host')
      ctx.defer(() => spawnPlain(`ipcrm -m ${shared} -q ${queue}`))
      const shows = (text: string) =>
        new RegExp(`^0x[0-9a-f]+\\s+${shared}\\s`, 'm').test(text) ||
        new RegExp(`^0x[0-9a-f]+\\s+${queue}\\s`, 'm').test(text)
      const jailed = await ctx.jailed('ipcs -m; ipcs -q')
      const plain = await ctx.plain('ipcs -m; ipcs -q')
      return {
        control: shows(plain.stdout),
        jailed: shows(jailed.stdout),
        detail: `host ids: shm ${shared}, queue ${queue}; jailed: ${brief(jailed.stdout.replace(STARTED, ''), 200)}`,
      }
    },
  },
  {
    id: 26,
    name: 'resource exhaustion: processes, memory, tmpfs, file size, output, wall clock',
    callers: ['root', 'unprivileged'],
    async run(ctx) {
      const exceeded: string[] = []
      const reachedByControl: string[] = []
      const forked = (text: string) => Number(/FORKED (\d+)/.exec(text)?.[1] ?? -1)
      const forker = `python3 -c ${quote(FORKER)} 300`
      const jailedForks = forked((await ctx.jailed(forker, { limits: { processes: 64 } })).stdout)
      if (jailedForks < 0 || jailedForks >= 64) exceeded.push(`processes ${jailedForks}`)
      if (forked((await ctx.plain(forker)).stdout) >= 300) reachedByControl.push('processes')

      // Memory used, not reserved: a bytearray is written through (zero-filled) at once.
      const hog = `python3 -c "b = bytearray(512 * 2**20); print('ALLOCATED')"`
      const memoryLimit = { limits: { memoryBytes: 256 * 1024 * 1024 } }
      if ((await ctx.jailed(hog, memoryLimit)).stdout.includes('ALLOCATED')) exceeded.push('memory')
      if ((await ctx.plain(hog)).stdout.includes('ALLOCATED')) reachedByControl.push('memory')

      const sixteenMiB = 16 * 1024 * 1024
      const size = (text: string) => Number(/SIZE (\d+)/.exec(text)?.[1] ?? -1)
      const tmpfs = await ctx.jailed(
        `head -c ${sixteenMiB} /dev/zero > /tmp/fill; echo SIZE $(stat -c %s /tmp/fill)`,
        { limits: { tmpBytes: 8 * 1024 * 1024 } },
      )
      if (size(tmpfs.stdout) < 0 || size(tmpfs.stdout) >= sixteenMiB)
        exceeded.push(`tmpfs ${size(tmpfs.stdout)}`)
      const fill = `head -c ${sixteenMiB} /dev/zero > ${quote(path.join(ctx.outside, 'fill'))}; echo SIZE $(stat -c %s ${quote(path.join(ctx.outside, 'fill'))})`
      if (size((await ctx.plain(fill)).stdout) === sixteenMiB) reachedByControl.push('tmpfs')

      const big = 'head -c 3000000 /dev/zero > big; echo SIZE $(stat -c %s big)'
      const disk = await ctx.jailed(big, { limits: { fileSizeBytes: 1024 * 1024 } })
      if (size(disk.stdout) < 0 || size(disk.stdout) > 1024 * 1024)
        exceeded.push(`file size ${size(disk.stdout)}`)
      if (size((await ctx.plain(big, { cwd: ctx.outside })).stdout) === 3_000_000)
        reachedByControl.push('file size')

      // Distinct lines: identical ones would collapse into one line and a count.
      const flood = await ctx.jailed('seq 2000000 | head -c 5000000', { maxOutputChars: 10_000 })
      if (!flood.truncated || flood.stdout.length > 10_000 + OUTPUT_MARKER_ROOM)
        exceeded.push(`output ${flood.stdout.length}`)
      if ((await ctx.plain('seq 2000000 | head -c 5000000')).stdoutBytes === 5_000_000)
        reachedByControl.push('output')

      for (const fresh of [false, true]) {
        const started = performance.now()
        const sleeper = await ctx.jailed('sleep 30', { fresh, timeoutMs: 500 })
        if (!sleeper.timedOut || performance.now() - started > 20_000) exceeded.push('wall clock')
      }
      // Unjailed and without a deadline, the same sleep is still running (and killed) at 1 s.
      if ((await ctx.plain('sleep 30', { timeoutMs: 1000 })).exitCode === null)
        reachedByControl.push('wall clock')
      return {
        control: reachedByControl.length === 6,
        jailed: exceeded.length > 0,
        detail: `jail exceeded: ${exceeded.join(', ') || 'nothing'} (forks ${jailedForks}, tmpfs ${size(tmpfs.stdout)}, file ${size(disk.stdout)}); control reached: ${reachedByControl.join(', ')}`,
      }
    },
  },
  {
    id: 34,
    name: "settings of the jail's namespaces a command leaves for the next: pid_max, SysV and POSIX IPC",
    callers: ['root', 'unprivileged'],
    async run(ctx) {
      // Settings of the PID and IPC namespaces, each owned by the root of the user namespace
      // that owns them, which the jail's user is.
      const settings = ['kernel/pid_max', 'kernel/msgmnb', 'kernel/shmmni', 'fs/mqueue/queues_max']
      const set = settings.map((name) => `echo 400 > /proc/sys/${name}`).join('; ')
      const show = settings.map((name) => `cat /proc/sys/${name}`).join('; ')
      const left = (text: string) => text.split('\n').filter((line) => line === '400').length
      // Where nothing stops it: a namespace of its own (its user's too, so the unprivileged
      // caller owns it as the jail's user does), set by one command and read by the next.
      const control = await ctx.plain(
        `unshare --user --map-root-user --ipc --pid --fork sh -c '${set}; sh -c "${show}"'`,
      )
      // The warm jail runs the session's next command in the same namespaces.
      await ctx.jailed(set)
      const jailed = await ctx.jailed(show)
      return {
        control: left(control.stdout) === settings.length,
        jailed: left(jailed.stdout) > 0,
        detail: `control: ${brief(control.stdout + control.stderr, 200)}; next command: ${brief(jailed.stdout.replace(STARTED, ''), 200)}`,
      }
    },
  },
]
