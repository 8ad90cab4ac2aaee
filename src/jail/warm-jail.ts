/**
 * @module jail/warm-jail
 * One long-lived jail that runs a session's foreground commands one after another through a
 * small supervisor inside it (jail-supervisor-main.ts). Starting bubblewrap costs milliseconds
 * per command; a warm jail pays it once, and each command then costs about a plain spawn. The
 * supervisor kills everything a command left behind before the next one starts, so commands
 * share only what a shell session shares: the workspace and /tmp.
 */
import { fileURLToPath } from 'node:url'
import { EitriError } from '../errors/eitri-error.ts'
import type { JailedProcess } from './jailed-process.ts'
import { type JailedExit } from './jailed-process.ts'
import { countDescendants } from './process-tree.ts'

/** The supervisor's file: `.mts` in the sources, `.mjs` in the build (ESM either way). */
export const SUPERVISOR_FILE = fileURLToPath(
  new URL(
    import.meta.url.endsWith('.ts') ? './jail-supervisor-main.mts' : './jail-supervisor-main.mjs',
    import.meta.url,
  ),
)

/** Where Node and the supervisor are mounted inside the jail. */
export const NODE_MOUNT = '/opt/eitri/node'
export const SUPERVISOR_MOUNT = `/opt/eitri/${SUPERVISOR_FILE.endsWith('.mts') ? 'jail-supervisor.mts' : 'jail-supervisor.mjs'}`

/** Extra time the host gives the supervisor past a command's deadline before killing the jail. */
const SUPERVISOR_GRACE_MS = 2000

/** How long the host waits for what a command left behind to die before ending the jail. */
const SETTLE_MS = 200

/** One command for the supervisor. */
export interface WarmCommand {
  readonly argv: readonly string[]
  readonly cwd: string
  readonly environment: Readonly<Record<string, string>>
  readonly timeoutMs: number
  readonly maxOutputChars: number
  readonly signal?: AbortSignal | undefined
}

/** The supervisor's answer. */
export interface WarmOutcome extends JailedExit {
  readonly stdout: string
  readonly stderr: string
  readonly stdoutDropped: number
  readonly stderrDropped: number
}

/** A supervisor running in a jail. */
export class WarmJail {
  readonly #process: JailedProcess
  readonly #waiting = new Map<number, (outcome: WarmOutcome) => void>()
  readonly ready: Promise<void>
  #nextId = 1
  #dead: string | undefined
  /** Processes below bubblewrap when the supervisor was ready: its init and the supervisor. */
  #idleProcesses = 0

  /** `startJail` starts bubblewrap running Node on the supervisor, its output sent to `onOutput`. */
  constructor(
    startJail: (onOutput: (stream: 'stdout' | 'stderr', chunk: Buffer) => void) => JailedProcess,
  ) {
    let markReady: () => void = () => undefined
    let failReady: (error: Error) => void = () => undefined
    this.ready = new Promise((resolve, reject) => {
      markReady = resolve
      failReady = reject
    })
    let buffer = ''
    this.#process = startJail((stream, chunk) => {
      if (stream !== 'stdout') return
      buffer += chunk.toString('utf8')
      for (let newline = buffer.indexOf('\n'); newline !== -1; newline = buffer.indexOf('\n')) {
        this.#receive(buffer.slice(0, newline), markReady)
        buffer = buffer.slice(newline + 1)
      }
    })
    void this.#process.exited.then((exit) => {
      this.#dead = `the warm jail ended (exit ${exit.exitCode ?? exit.signal ?? 'unknown'}): ${this.#process.stderr.text().trim() || exit.spawnError || 'no message'}`
      failReady(new EitriError('jail_unavailable', this.#dead))
      for (const [id, resolve] of this.#waiting) {
        this.#waiting.delete(id)
        resolve(deadOutcome(this.#dead))
      }
    })
  }

  /** True while the supervisor can take commands. */
  get alive(): boolean {
    return this.#dead === undefined && this.#process.running
  }

  /** Runs one command; the supervisor runs them in order, one at a time. */
  async run(command: WarmCommand): Promise<WarmOutcome> {
    await this.ready
    if (!this.alive) return deadOutcome(this.#dead ?? 'the warm jail ended')
    const id = this.#nextId++
    const outcome = new Promise<WarmOutcome>((resolve) => this.#waiting.set(id, resolve))
    const onAbort = (): void => this.#send({ cancel: id })
    command.signal?.addEventListener('abort', onAbort, { once: true })
    // If the supervisor itself hangs past the deadline, the whole jail goes.
    const guard = setTimeout(() => this.#process.kill(), command.timeoutMs + SUPERVISOR_GRACE_MS)
    this.#send({
      id,
      argv: command.argv,
      cwd: command.cwd,
      environment: command.environment,
      timeoutMs: command.timeoutMs,
      maxOutputChars: command.maxOutputChars,
    })
    if (command.signal?.aborted === true) onAbort()
    try {
      const answer = await outcome
      // The supervisor's answer proves nothing: a command runs as the same user, can take its
      // reply channel (pidfd_getfd, ptrace) and answer early while it keeps running. So the
      // host counts what is left in the jail itself, and ends the whole jail if it is more.
      if (!(await this.#settled())) await this.close()
      return answer
    } finally {
      clearTimeout(guard)
      command.signal?.removeEventListener('abort', onAbort)
    }
  }

  /** Whether the jail is back to its idle processes, waiting briefly for killed ones to go. */
  async #settled(): Promise<boolean> {
    const deadline = performance.now() + SETTLE_MS
    for (;;) {
      const pid = this.#process.pid
      if (pid === undefined || !this.alive) return true
      if (countDescendants(pid) <= this.#idleProcesses) return true
      if (performance.now() > deadline) return false
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
  }

  /** Ends the supervisor and everything in its jail. */
  async close(): Promise<void> {
    this.#process.kill()
    await this.#process.exited
  }

  #send(message: object): void {
    if (this.alive) this.#process.write(`${JSON.stringify(message)}\n`)
  }

  #receive(line: string, markReady: () => void): void {
    let message: { ready?: boolean; id?: number } & Partial<WarmOutcome>
    try {
      message = JSON.parse(line) as typeof message
    } catch {
      return
    }
    if (message.ready === true) {
      this.#idleProcesses = countDescendants(this.#process.pid ?? 0)
      return markReady()
    }
    if (typeof message.id !== 'number') return
    const resolve = this.#waiting.get(message.id)
    if (resolve === undefined) return
    this.#waiting.delete(message.id)
    resolve({
      exitCode: message.exitCode ?? null,
      signal: message.signal ?? null,
      timedOut: message.timedOut === true,
      cancelled: message.cancelled === true,
      durationMs: message.durationMs ?? 0,
      stdout: message.stdout ?? '',
      stderr: message.stderr ?? '',
      stdoutDropped: message.stdoutDropped ?? 0,
      stderrDropped: message.stderrDropped ?? 0,
    })
  }
}

function deadOutcome(reason: string): WarmOutcome {
  return {
    exitCode: null,
    signal: null,
    timedOut: false,
    cancelled: false,
    durationMs: 0,
    stdout: '',
    stderr: '',
    stdoutDropped: 0,
    stderrDropped: 0,
    spawnError: reason,
  }
}
