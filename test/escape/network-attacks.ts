/**
 * Attacks on the host's sockets and network, and argument injection into bubblewrap.
 */
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import {
  brief,
  listenDatagrams,
  listenStream,
  quote,
  STARTED,
  type Attack,
  type Listener,
} from './helpers.ts'

/** Connects to each target and says which worked: `unix:PATH`, `tcp:HOST:PORT`, `udp:HOST:PORT`. */
const CONNECTOR = `
import socket, sys
for target in sys.argv[1:]:
    kind, _, address = target.partition(':')
    try:
        if kind == 'unix':
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.settimeout(2)
            s.connect(address.replace('@', '\\0', 1) if address.startswith('@') else address)
        else:
            host, _, port = address.rpartition(':')
            family = socket.AF_INET6 if ':' in host else socket.AF_INET
            s = socket.socket(family, socket.SOCK_DGRAM if kind == 'udp' else socket.SOCK_STREAM)
            s.settimeout(2)
            if kind == 'udp':
                s.sendto(b'pwned', (host, int(port)))
                print('sent', target, flush=True)
                continue
            s.connect((host, int(port)))
        print('CONNECTED', target, flush=True)
    except OSError as error:
        print('refused', target, error, flush=True)
`

/** Makes an AF_VSOCK socket and an io_uring; says `MADE` for each it made. */
const UNSCOPED = `
import ctypes, socket
try:
    socket.socket(40, socket.SOCK_STREAM).close(); print('MADE vsock')
except OSError as error: print('refused vsock', error)
libc = ctypes.CDLL(None, use_errno=True); libc.syscall.restype = ctypes.c_long
ring = libc.syscall(425, 4, ctypes.byref(ctypes.create_string_buffer(120)))
print('MADE ring' if ring >= 0 else 'refused ring %d' % ctypes.get_errno())
`

const connect = (targets: readonly string[]) =>
  `python3 -c ${quote(CONNECTOR)} ${targets.map(quote).join(' ')}`

/** Connection targets and their listeners, run by the jail first and then by the control. */
async function probe(
  ctx: Parameters<Attack['run']>[0],
  targets: { target: string; listener: Listener }[],
  extra: readonly string[] = [],
  bashExtra = '',
) {
  for (const { listener } of targets) ctx.defer(() => listener.close())
  const all = [...targets.map(({ target }) => target), ...extra]
  const jailed = await ctx.jailed(`${connect(all)}; ${bashExtra}`)
  const reachedByJail = targets
    .filter(({ listener }) => listener.seen() > 0)
    .map(({ target }) => target)
  const jailedSaid = jailed.stdout.split('\n').filter((line) => line.startsWith('CONNECTED'))
  const counts = targets.map(({ listener }) => listener.seen())
  await ctx.plain(`${connect(targets.map(({ target }) => target))}; ${bashExtra}`)
  await new Promise((resolve) => setTimeout(resolve, 100))
  const controlReached = targets.every(
    ({ listener }, index) => listener.seen() > (counts[index] ?? 0),
  )
  return {
    control: controlReached,
    jailed: reachedByJail.length > 0 || jailedSaid.length > 0,
    detail: `jail reached: ${[...reachedByJail, ...jailedSaid].join(', ') || 'nothing'}; jailed said: ${brief(jailed.stdout.replace(STARTED, ''), 300)}`,
  }
}

/** The first non-loopback IPv4 address of the host, if it has one. */
function hostAddress(): string | undefined {
  return Object.values(os.networkInterfaces())
    .flat()
    .find((entry) => entry !== undefined && entry.family === 'IPv4' && !entry.internal)?.address
}

/** The hostile workspace name of attack 27: it starts with `--`, has spaces and a newline. */
const HOSTILE_NAME = "--share-net \n cat $(printf '\\057proc\\057net\\057dev') #"

/** Interfaces other than lo in a /proc/net/dev listing. */
function foreignInterfaces(text: string): string[] {
  return [...text.matchAll(/^\s*([^\s:|]+):/gm)]
    .map((match) => match[1] ?? '')
    .filter((name) => name !== 'lo')
}

export const networkAttacks: readonly Attack[] = [
  {
    id: 11,
    name: 'host unix sockets: one by its host path, and the usual daemons',
    callers: ['root', 'unprivileged'],
    async run(ctx) {
      const socketPath = path.join(ctx.outside, 'host.sock')
      const listener = await listenStream({ path: socketPath })
      const daemons = [
        process.env.SSH_AUTH_SOCK,
        '/run/docker.sock',
        '/var/run/docker.sock',
        '/run/dbus/system_bus_socket',
        '/tmp/.X11-unix/X0',
        '/run/systemd/private',
      ].filter((socket): socket is string => socket !== undefined)
      return probe(
        ctx,
        [{ target: `unix:${socketPath}`, listener }],
        daemons.map((socket) => `unix:${socket}`),
      )
    },
  },
  {
    id: 11,
    name: 'a unix socket and a named pipe a host program listens on inside the workspace, from read-only and writable commands',
    callers: ['root', 'unprivileged'],
    async run(ctx) {
      // A host program of the person's with its socket and its pipe in the project (a database's
      // socket folder, a dev server's, a pipe a script reads commands from): open to everyone,
      // as many are, so only the jail stands in the way.
      const listener = await listenStream({ path: path.join(ctx.workspace, 'host.sock') })
      ctx.defer(() => listener.close())
      fs.chmodSync(path.join(ctx.workspace, 'host.sock'), 0o777)
      const pipe = path.join(ctx.workspace, 'host.fifo')
      await ctx.plain(`mkfifo -m 666 ${quote(pipe)}`)
      fs.chmodSync(pipe, 0o666)
      // The host program reads the pipe (opened without waiting for a writer).
      const reader = fs.openSync(pipe, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK)
      ctx.defer(() => fs.closeSync(reader))
      const heard = (): string => {
        const buffer = Buffer.alloc(4096)
        try {
          return buffer.subarray(0, fs.readSync(reader, buffer)).toString()
        } catch {
          return '' // nothing written yet
        }
      }
      const attack = (who: string) =>
        `${connect(['unix:host.sock'])}; timeout 2 sh -c 'echo ${who} > host.fifo'`
      const said: string[] = []
      for (const access of ['read-only', 'workspace-write'] as const) {
        said.push((await ctx.jailed(attack('JAILED'), { access })).stdout)
        const job = await ctx.jail.start({ command: ['/bin/bash', '-c', attack('JAILED')], access })
        said.push((await job.finished).stdout)
      }
      const jailedHeard = heard()
      const reachedByJail = listener.seen()
      await ctx.plain(attack('PLAIN'))
      const controlHeard = heard()
      return {
        control: listener.seen() > reachedByJail && controlHeard.includes('PLAIN'),
        jailed: reachedByJail > 0 || jailedHeard.includes('JAILED'),
        detail: `socket reached ${reachedByJail} times, pipe heard ${JSON.stringify(jailedHeard)}; jailed said: ${brief(said.join(' | ').replaceAll(STARTED, ''), 300)}`,
      }
    },
  },
  {
    id: 12,
    name: 'an abstract unix socket and host loopback TCP',
    callers: ['root', 'unprivileged'],
    async run(ctx) {
      const abstract = `eitri-escape-${process.pid}-${ctx.marker.slice(-8)}`
      const unix = await listenStream({ path: `\0${abstract}` })
      const tcp = await listenStream({ host: '127.0.0.1' })
      return probe(
        ctx,
        [
          { target: `unix:@${abstract}`, listener: unix },
          { target: `tcp:127.0.0.1:${tcp.port}`, listener: tcp },
        ],
        [],
        `(exec 3<>/dev/tcp/127.0.0.1/${tcp.port}) 2>/dev/null && echo CONNECTED bash /dev/tcp`,
      )
    },
  },
  {
    id: 13,
    name: 'egress without a proxy: UDP, IPv6 loopback, a host address',
    callers: ['root', 'unprivileged'],
    async run(ctx) {
      const udp = await listenDatagrams('127.0.0.1')
      const targets = [{ target: `udp:127.0.0.1:${udp.port}`, listener: udp }]
      const loopback6 = await listenStream({ host: '::1' }).catch(() => undefined)
      const second = loopback6 ?? (await listenStream({ host: '127.0.0.2' }))
      targets.push({
        target: `tcp:${loopback6 === undefined ? '127.0.0.2' : '::1'}:${second.port}`,
        listener: second,
      })
      const address = hostAddress()
      if (address !== undefined) {
        const external = await listenStream({ host: address })
        targets.push({ target: `tcp:${address}:${external.port}`, listener: external })
      }
      return probe(ctx, targets, [], 'getent hosts example.com && echo CONNECTED dns')
    },
  },
  {
    id: 14,
    name: 'a socket no network namespace scopes (AF_VSOCK), and io_uring, which makes sockets past the socket call',
    callers: ['root', 'unprivileged'],
    async run(ctx) {
      // On a virtual machine AF_VSOCK reaches the hypervisor's services whatever the network
      // namespace; making the socket is the step the jail must refuse (no listener is dialled:
      // the hypervisor's side is not ours to touch).
      const jailed = await ctx.jailed(`python3 -c ${quote(UNSCOPED)}`)
      const plain = await ctx.plain(`python3 -c ${quote(UNSCOPED)}`)
      return {
        control: plain.stdout.includes('MADE vsock') && plain.stdout.includes('MADE ring'),
        jailed: jailed.stdout.includes('MADE'),
        detail: `jailed said: ${brief(jailed.stdout.replace(STARTED, ''), 300)}`,
      }
    },
  },
  {
    id: 27,
    name: 'argument injection into bubblewrap through a hostile workspace name',
    callers: ['root', 'unprivileged'],
    async run(ctx) {
      const hostile = path.join(ctx.base, HOSTILE_NAME)
      fs.mkdirSync(hostile, { mode: 0o755 })
      fs.writeFileSync(
        path.join(hostile, '--help'),
        '#!/bin/sh\necho RAN-AS-COMMAND\ncat /proc/net/dev\n',
        { mode: 0o755 },
      )
      const { jail } = ctx.jailOver(hostile)
      const findings: string[] = []
      for (const fresh of [false, true]) {
        const result = await jail.run({
          command: ['--help'],
          access: 'workspace-write',
          timeoutMs: 15_000,
          environment: { PATH: '/workspace:/usr/bin:/bin' },
          ...(fresh ? { limits: {} } : {}),
        })
        const kind = fresh ? 'fresh' : 'warm'
        if (!result.stdout.includes('RAN-AS-COMMAND'))
          findings.push(
            `${kind}: --help was not run as a command (${brief(result.stdout + result.stderr, 150)})`,
          )
        const foreign = foreignInterfaces(result.stdout)
        if (foreign.length > 0) findings.push(`${kind}: host interfaces ${foreign.join(', ')}`)
      }
      // The naive way: bubblewrap's command line as one shell string.
      const naive = await ctx.plain(
        `bwrap --unshare-all --ro-bind /usr /usr --symlink usr/bin /bin --symlink usr/lib /lib --symlink usr/lib64 /lib64 --proc /proc --dev /dev --bind ${hostile} /workspace --chdir /workspace -- /bin/cat /proc/net/dev`,
      )
      const naiveForeign = foreignInterfaces(naive.stdout)
      return {
        control: naiveForeign.length > 0,
        jailed: findings.length > 0,
        detail: `jail: ${findings.join('; ') || 'ran --help as a command, only lo'}; naive shell string showed: ${naiveForeign.join(', ')}`,
      }
    },
  },
]
