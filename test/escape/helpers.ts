/**
 * Shared parts of the jail-escape attacks: the attack shape, plain (unjailed) spawns, host
 * canaries (folder snapshots, marked processes, listening sockets) and small waits.
 */
import { spawn } from 'node:child_process'
import dgram from 'node:dgram'
import fs from 'node:fs'
import net from 'node:net'
import path from 'node:path'
import type { Jail, JailRequest, JailResult } from '../../src/jail/jail.ts'
import type { WorkspaceView } from '../../src/ports/workspace-view.ts'

/** Who runs the attacks: root, or an unprivileged uid (65534 in CI). */
export type Caller = 'root' | 'unprivileged'

/** What one attack found: did the plain control reach its target, did the jailed attempt? */
export interface Outcome {
  readonly control: boolean
  readonly jailed: boolean
  readonly detail: string
}

/** One attack of docs/jail-attack-classes.md. */
export interface Attack {
  /** The attack class number of §7. */
  readonly id: number
  readonly name: string
  /** The callers it applies to; a missing one says why in a comment. */
  readonly callers: readonly Caller[]
  run(ctx: AttackContext): Promise<Outcome>
}

/** One attack's result as the runner prints it and the test reads it. */
export interface AttackReport {
  readonly key: string
  readonly control?: boolean
  readonly jailed?: boolean
  readonly detail?: string
  /** Set when the attack itself failed (it never ran, or its setup broke). */
  readonly error?: string
  readonly durationMs: number
}

/** Options of a jailed run beyond the request's defaults. */
export interface JailedOptions extends Partial<Omit<JailRequest, 'command'>> {
  /** A jail of its own rather than the session's warm one: any request with limits takes it. */
  readonly fresh?: boolean
  /** False when the attack may legitimately never start (a refusal is the expected outcome). */
  readonly expectStart?: boolean
  /** Another jail than the context's (from `jailOver`). */
  readonly jail?: Jail
}

/** Options of a plain (unjailed) run. */
export interface PlainOptions {
  readonly env?: Readonly<Record<string, string>>
  readonly cwd?: string
  /** The whole process group is killed after this long. @default 20 s */
  readonly timeoutMs?: number
  /** Kill only the direct child after this long and return at once (orphans keep running). */
  readonly killChildAfterMs?: number
}

/** How a plain run ended. */
export interface PlainResult {
  readonly exitCode: number | null
  readonly stdout: string
  readonly stderr: string
  readonly stdoutBytes: number
}

/** What every attack gets: fresh folders owned by the caller and a jail over the workspace. */
export interface AttackContext {
  readonly caller: Caller
  /** Unique to this attack and process; split it (`${marker.slice(0, 8)}` …) inside scripts. */
  readonly marker: string
  /** The folder holding `workspace` and `outside` (0755). */
  readonly base: string
  readonly workspace: string
  /** A folder beside the workspace: the canary targets. */
  readonly outside: string
  readonly jail: Jail
  readonly view: WorkspaceView
  /** Runs `/bin/bash -c script` in the jail, `workspace-write` unless told otherwise. */
  jailed(script: string, options?: JailedOptions): Promise<JailResult>
  /** Runs `/bin/bash -c script` as the same caller without a jail, cwd the workspace. */
  plain(script: string, options?: PlainOptions): Promise<PlainResult>
  /** A jail and view over another folder, closed with the context. */
  jailOver(folder: string): { jail: Jail; view: WorkspaceView }
  /** Runs `cleanup` when the attack ends, whatever happened. */
  defer(cleanup: () => unknown): void
}

/** Printed first by every jailed script, so an attack that never ran cannot pass. */
export const STARTED = 'eitri-escape-started'

/** Spawns `/bin/bash -c script` (extra `args` become $1…) without a jail. */
export function spawnPlain(
  script: string,
  options: PlainOptions & { args?: readonly string[] } = {},
): Promise<PlainResult> {
  return new Promise((resolve, reject) => {
    const child = spawn('/bin/bash', ['-c', script, 'bash', ...(options.args ?? [])], {
      cwd: options.cwd,
      env: { ...process.env, ...options.env },
      stdio: ['ignore', 'pipe', 'pipe'],
      detached: true,
    })
    const stdout: Buffer[] = []
    const stderr: Buffer[] = []
    child.stdout.on('data', (chunk: Buffer) => stdout.push(chunk))
    child.stderr.on('data', (chunk: Buffer) => stderr.push(chunk))
    const finish = (exitCode: number | null): void => {
      clearTimeout(timer)
      const out = Buffer.concat(stdout)
      resolve({
        exitCode,
        stdout: out.toString('utf8'),
        stderr: Buffer.concat(stderr).toString('utf8'),
        stdoutBytes: out.length,
      })
    }
    const timer = setTimeout(
      () => {
        if (options.killChildAfterMs !== undefined) {
          child.kill('SIGKILL')
          return
        }
        try {
          process.kill(-(child.pid ?? 0), 'SIGKILL')
        } catch {
          // already gone
        }
      },
      options.killChildAfterMs ?? options.timeoutMs ?? 20_000,
    )
    child.once('error', reject)
    if (options.killChildAfterMs !== undefined) {
      // Orphans may hold the pipes open: return when the child itself is gone.
      child.once('exit', (code) => {
        child.stdout.destroy()
        child.stderr.destroy()
        finish(code)
      })
    } else {
      child.once('close', (code) => finish(code))
    }
  })
}

/** Throws unless a jailed script printed {@link STARTED}: an attack that never ran proves nothing. */
export function assertStarted(result: JailResult, what: string): void {
  if (!result.stdout.includes(STARTED)) {
    throw new Error(
      `${what}: the jailed script never started (exit ${result.exitCode ?? result.signal}, ${result.spawnError ?? ''} ${result.stderr.slice(0, 400)})`,
    )
  }
}

/** Every entry under a host folder: file content, link target or `(folder)`. */
export function snapshot(folder: string): Record<string, string> {
  const shot: Record<string, string> = {}
  if (!fs.existsSync(folder)) return shot
  for (const entry of fs.readdirSync(folder, { recursive: true, withFileTypes: true })) {
    const full = `${entry.parentPath}/${entry.name}`
    const key = full.slice(folder.length + 1)
    if (entry.isSymbolicLink()) shot[key] = `-> ${fs.readlinkSync(full)}`
    else if (entry.isDirectory()) shot[key] = '(folder)'
    else if (entry.isFile()) shot[key] = fs.readFileSync(full, 'utf8')
    else shot[key] = '(other)'
  }
  return shot
}

/** The keys whose value differs between two snapshots, or that only one of them has. */
export function changes(before: Record<string, string>, after: Record<string, string>): string[] {
  const keys = new Set([...Object.keys(before), ...Object.keys(after)])
  return [...keys].filter((key) => before[key] !== after[key]).sort()
}

/** Host processes (not this one) whose command line contains `marker`. */
export function processesWith(marker: string): number[] {
  const found: number[] = []
  for (const name of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue
    try {
      if (fs.readFileSync(`/proc/${name}/cmdline`).toString('utf8').includes(marker)) {
        found.push(Number(name))
      }
    } catch {
      // ended meanwhile
    }
  }
  return found
}

/** Whether a process exists (and is not a zombie). */
export function alive(pid: number): boolean {
  try {
    return !/^State:\s+Z/m.test(fs.readFileSync(`/proc/${pid}/status`, 'utf8'))
  } catch {
    return false
  }
}

/** Kills processes by id, ignoring ones already gone. */
export function killAll(pids: readonly number[]): void {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL')
    } catch {
      // already gone
    }
  }
}

/**
 * A host process carrying `marker` in its argv and environment, tracable by anyone
 * (PR_SET_PTRACER_ANY, so Yama's ptrace_scope 1 does not hide it from the plain control).
 */
export function startCanaryProcess(marker: string): { pid: number; stop(): void } {
  const child = spawn(
    'python3',
    [
      '-c',
      'import ctypes, time\nctypes.CDLL(None).prctl(0x59616D61, ctypes.c_ulong(-1), 0, 0, 0)\ntime.sleep(1000)',
      marker,
    ],
    { stdio: 'ignore', detached: true, env: { PATH: '/usr/bin:/bin', EITRI_CANARY: marker } },
  )
  child.unref()
  const pid = child.pid
  if (pid === undefined) throw new Error('the canary process did not start')
  return { pid, stop: () => killAll([pid]) }
}

/** A listening socket that counts who connected (or, for UDP, what arrived). */
export interface Listener {
  /** The TCP or UDP port; 0 for unix sockets. */
  readonly port: number
  seen(): number
  close(): Promise<void>
}

/** Listens on a unix socket path, an abstract name (`\0name`), or `host` with a free TCP port. */
export function listenStream(address: { path: string } | { host: string }): Promise<Listener> {
  return new Promise((resolve, reject) => {
    let count = 0
    const server = net.createServer((socket) => {
      count++
      socket.destroy()
    })
    server.once('error', reject)
    const ready = (): void => {
      const bound = server.address()
      resolve({
        port: typeof bound === 'object' && bound !== null ? bound.port : 0,
        seen: () => count,
        close: () => new Promise((done) => server.close(() => done())),
      })
    }
    if ('path' in address) server.listen(address.path, ready)
    else server.listen(0, address.host, ready)
  })
}

/** Binds a UDP socket on `host` at a free port and counts the datagrams. */
export function listenDatagrams(host: string): Promise<Listener> {
  return new Promise((resolve, reject) => {
    let count = 0
    const socket = dgram.createSocket(host.includes(':') ? 'udp6' : 'udp4')
    socket.on('message', () => count++)
    socket.once('error', reject)
    socket.bind(0, host, () =>
      resolve({
        port: socket.address().port,
        seen: () => count,
        close: () => new Promise((done) => socket.close(() => done())),
      }),
    )
  })
}

/** Waits until `condition` holds or `timeoutMs` passes; answers whether it held. */
export async function waitFor(condition: () => boolean, timeoutMs: number): Promise<boolean> {
  const deadline = performance.now() + timeoutMs
  while (performance.now() < deadline) {
    if (condition()) return true
    await sleep(20)
  }
  return condition()
}

export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms))
}

/** Lines of `text` that show something, for short details. */
export function brief(text: string, max = 300): string {
  const flat = text.replace(/\s+/g, ' ').trim()
  return flat.length > max ? `${flat.slice(0, max)}…` : flat
}

/** `value` as one shell word. */
export function quote(value: string): string {
  return `'${value.replaceAll("'", `'\\''`)}'`
}

/** `marker` as a shell word that never appears whole in the script's own text. */
export function splitWord(marker: string): string {
  const half = Math.floor(marker.length / 2)
  return `${quote(marker.slice(0, half))}${quote(marker.slice(half))}`
}

/** A file with `content`, creating folders. */
export function put(file: string, content: string, mode?: number): void {
  fs.mkdirSync(path.dirname(file), { recursive: true })
  fs.writeFileSync(file, content, mode === undefined ? {} : { mode })
}

/** Whether anything (a dangling link too) is at `file`. */
export function exists(file: string): boolean {
  return fs.lstatSync(file, { throwIfNoEntry: false }) !== undefined
}

/** A file's text, or undefined when it cannot be read. */
export function read(file: string): string | undefined {
  try {
    return fs.readFileSync(file, 'utf8')
  } catch {
    return undefined
  }
}
