/**
 * @module jail/warm-jail
 * One long-lived jail that runs a session's foreground commands one after another through a
 * small supervisor inside it (jail-supervisor-main.mjs). Starting bubblewrap costs milliseconds
 * per command; a warm jail pays it once, and each command then costs about a plain spawn. The
 * supervisor kills everything a command left behind before the next one starts, so commands
 * share only what a shell session shares: the workspace and /tmp.
 */
import { fileURLToPath } from 'node:url'
import { z } from 'zod'
import { EitriError } from '../errors/eitri-error.ts'
import { LineSplitter } from '../util/line-splitter.ts'
import type { JailedProcess } from './jailed-process.ts'
import { type JailedExit } from './jailed-process.ts'
import { OUTPUT_MARKER_ROOM } from '../util/output-window.mjs'
import { countDescendants } from './process-tree.ts'
import { SerialQueue } from '../util/serial-queue.ts'

/**
 * The supervisor's file and the one module it imports: plain JavaScript in the sources and the
 * build alike, so Node starts it without stripping types.
 */
export const SUPERVISOR_FILE = fileURLToPath(new URL('./jail-supervisor-main.mjs', import.meta.url))
export const OUTPUT_WINDOW_FILE = fileURLToPath(
  new URL('../util/output-window.mjs', import.meta.url),
)

/** Where Node and the supervisor are mounted inside the jail. */
export const NODE_MOUNT = '/opt/eitri/node'
export const SUPERVISOR_MOUNT = '/opt/eitri/jail/jail-supervisor.mjs'
/** Mounted where the supervisor's import finds it: the two keep their folders' relative places. */
export const OUTPUT_WINDOW_MOUNT = '/opt/eitri/util/output-window.mjs'

/**
 * Extra time the host gives the supervisor past a command's deadline before killing the jail:
 * the supervisor's own grace between interrupt and kill, and room to answer.
 */
const SUPERVISOR_GRACE_MS = 3000

/** How long the host waits for what a command left behind to die before ending the jail. */
const SETTLE_MS = 200

/** Longest reply line before any command is sent (the ready line). */
const IDLE_REPLY_BYTES = 4096
/**
 * Bytes one character of output can take in a reply line: JSON writes a control character as
 * six (`\u0001`), and nothing takes more.
 */
const REPLY_BYTES_PER_CHAR = 6
/** Room in a reply line besides its two outputs (ids, codes, a spawn error). */
const REPLY_OVERHEAD_BYTES = 64 * 1024

/**
 * The supervisor's lines, checked before use: a command runs as the same user and can take the
 * reply channel (pidfd_getfd, /proc/PID/fd), so anything may arrive on it.
 */
const replySchema = z.union([
  z.strictObject({ ready: z.literal(true) }),
  z.strictObject({
    id: z.number().int().positive(),
    exitCode: z.number().int().nullable(),
    signal: z.string().max(64).nullable(),
    timedOut: z.boolean(),
    cancelled: z.boolean(),
    durationMs: z.number().nonnegative(),
    stdout: z.string(),
    stderr: z.string(),
    stdoutDropped: z.number().int().nonnegative(),
    stderrDropped: z.number().int().nonnegative(),
  }),
])

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
  readonly #waiting = new Map<
    number,
    { readonly resolve: (outcome: WarmOutcome) => void; readonly maxOutputChars: number }
  >()
  readonly #replies: LineSplitter
  readonly ready: Promise<void>
  /** The run in progress; the next one starts after it. */
  readonly #queue = new SerialQueue()
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
    this.#replies = new LineSplitter(IDLE_REPLY_BYTES, {
      line: (line) => this.#receive(line, markReady),
      overflow: (bytes) =>
        this.#fail(
          `a reply line of the supervisor was over ${this.#replies.limit} bytes (${bytes} so far)`,
        ),
    })
    this.#process = startJail((stream, chunk) => {
      if (stream === 'stdout') this.#replies.push(chunk)
    })
    void this.#process.exited.then((exit) => {
      this.#dead ??= `the warm jail ended (exit ${exit.exitCode ?? exit.signal ?? 'unknown'}): ${this.#process.stderr.text().trim() || exit.spawnError || 'no message'}`
      failReady(new EitriError('jail_unavailable', this.#dead))
      this.#answerAllDead()
    })
  }

  /** True while the supervisor can take commands. */
  get alive(): boolean {
    return this.#dead === undefined && this.#process.running
  }

  /**
   * Runs one command. Commands run one at a time, each after the previous one settled: the
   * count of what a command left behind would otherwise see the next one running.
   */
  run(command: WarmCommand): Promise<WarmOutcome> {
    return this.#queue.run(() => this.#runNow(command))
  }

  async #runNow(command: WarmCommand): Promise<WarmOutcome> {
    await this.ready
    const aborted = (): boolean => command.signal?.aborted === true
    if (aborted()) return { ...deadOutcome('cancelled'), cancelled: true }
    if (!this.alive) return deadOutcome(this.#dead ?? 'the warm jail ended')
    const id = this.#nextId++
    const outcome = new Promise<WarmOutcome>((resolve) =>
      this.#waiting.set(id, { resolve, maxOutputChars: command.maxOutputChars }),
    )
    this.#replies.limit = this.#replyLimit()
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
    if (aborted()) onAbort()
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

  /** The longest reply any command waiting now can legitimately get. */
  #replyLimit(): number {
    let largest = 0
    for (const { maxOutputChars } of this.#waiting.values())
      largest = Math.max(largest, maxOutputChars)
    return Math.max(IDLE_REPLY_BYTES, 2 * REPLY_BYTES_PER_CHAR * largest + REPLY_OVERHEAD_BYTES)
  }

  #receive(line: string, markReady: () => void): void {
    if (this.#dead !== undefined) return
    let json: unknown
    try {
      json = JSON.parse(line)
    } catch {
      return this.#fail('the supervisor sent a line that is not JSON')
    }
    const parsed = replySchema.safeParse(json)
    if (!parsed.success) return this.#fail('the supervisor sent a reply out of protocol')
    const message = parsed.data
    if ('ready' in message) {
      this.#idleProcesses = countDescendants(this.#process.pid ?? 0)
      return markReady()
    }
    const waiting = this.#waiting.get(message.id)
    if (waiting === undefined)
      return this.#fail(`the supervisor answered command ${message.id}, which is not waiting`)
    // The supervisor keeps each stream to the command's limit (and its markers); more means
    // someone else wrote.
    if (
      message.stdout.length > waiting.maxOutputChars + OUTPUT_MARKER_ROOM ||
      message.stderr.length > waiting.maxOutputChars + REPLY_OVERHEAD_BYTES
    )
      return this.#fail('the supervisor sent more output than the command may keep')
    this.#waiting.delete(message.id)
    this.#replies.limit = this.#replyLimit()
    waiting.resolve({
      exitCode: message.exitCode,
      signal: message.signal,
      timedOut: message.timedOut,
      cancelled: message.cancelled,
      durationMs: message.durationMs,
      stdout: message.stdout,
      stderr: message.stderr,
      stdoutDropped: message.stdoutDropped,
      stderrDropped: message.stderrDropped,
    })
  }

  /**
   * Ends the jail over a reply out of protocol: whoever wrote it controls the channel, so no
   * answer on it can be believed any more. Every waiting command answers why.
   */
  #fail(reason: string): void {
    if (this.#dead !== undefined) return
    this.#dead = `${reason}; a command may have taken over the warm jail's reply channel, so the jail was ended. Run the command again (in a new jail)`
    this.#replies.stop()
    this.#process.kill()
    this.#answerAllDead()
  }

  #answerAllDead(): void {
    const reason = this.#dead ?? 'the warm jail ended'
    for (const [id, { resolve }] of this.#waiting) {
      this.#waiting.delete(id)
      resolve(deadOutcome(reason))
    }
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
    stderr: `eitri: ${reason}.\n`,
    stdoutDropped: 0,
    stderrDropped: 0,
    spawnError: reason,
  }
}
