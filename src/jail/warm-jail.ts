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
import { RequestChannel } from '../util/request-channel.ts'
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

/**
 * How long the jail stays idle before the supervisor is told to start the next command's
 * process: an agent's next command comes seconds later, a script's at once.
 */
const PREPARE_AFTER_IDLE_MS = 25

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
const readySchema = z.strictObject({ ready: z.literal(true) })
const replySchema = z.strictObject({
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
})
type Reply = z.output<typeof replySchema>

/** One command as the supervisor reads it (the channel adds its id). */
interface SupervisorRequest {
  readonly argv: readonly string[]
  readonly cwd: string
  readonly environment: Readonly<Record<string, string>>
  readonly timeoutMs: number
  readonly maxOutputChars: number
}

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
  /** Commands out and replies back, on the supervisor's stdin and stdout. */
  readonly #channel: RequestChannel<SupervisorRequest, Reply, 'ready'>
  readonly ready: Promise<void>
  /** The run in progress; the next one starts after it. */
  readonly #queue = new SerialQueue()
  #dead: string | undefined
  /** The `prepare` waiting for the jail to stay idle ({@link PREPARE_AFTER_IDLE_MS}). */
  #prepareTimer: NodeJS.Timeout | undefined
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
    this.#channel = new RequestChannel<SupervisorRequest, Reply, 'ready'>({
      write: (line) => {
        if (this.#process.running) this.#process.write(line)
      },
      maxLineBytes: IDLE_REPLY_BYTES,
      peer: 'the supervisor',
      parse: (value) => {
        if (readySchema.safeParse(value).success) return { notice: 'ready' }
        const reply = replySchema.safeParse(value)
        return reply.success ? { id: reply.data.id, reply: reply.data } : undefined
      },
      onNotice: () => {
        this.#idleProcesses = countDescendants(this.#process.pid ?? 0)
        markReady()
        this.#prepareNext()
      },
      onClose: (reason, outOfProtocol) => {
        if (!outOfProtocol) return
        // Whoever wrote it controls the channel, so no answer on it can be believed any more.
        this.#dead ??= `${reason}; a command may have taken over the warm jail's reply channel, so the jail was ended. Run the command again (in a new jail)`
        this.#process.kill()
      },
    })
    this.#process = startJail((stream, chunk) => {
      if (stream === 'stdout') this.#channel.push(chunk)
    })
    void this.#process.exited.then((exit) => {
      this.#dead ??= `the warm jail ended (exit ${exit.exitCode ?? exit.signal ?? 'unknown'}): ${this.#process.stderr.text().trim() || exit.spawnError || 'no message'}`
      failReady(new EitriError('jail_unavailable', this.#dead))
      this.#channel.close(this.#dead)
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
    // A command that follows at once goes the direct way (see #prepareNext).
    clearTimeout(this.#prepareTimer)
    await this.ready
    const aborted = (): boolean => command.signal?.aborted === true
    if (aborted()) return { ...deadOutcome('cancelled'), cancelled: true }
    if (!this.alive) return deadOutcome(this.#dead ?? 'the warm jail ended')
    // One command at a time (the queue): the longest reply is this command's.
    this.#channel.lineLimit = replyLimit(command.maxOutputChars)
    let id: number | undefined
    const onAbort = (): void => {
      if (id !== undefined) this.#channel.notify({ cancel: id })
    }
    command.signal?.addEventListener('abort', onAbort, { once: true })
    // If the supervisor itself hangs past the deadline, the whole jail goes.
    const guard = setTimeout(() => this.#process.kill(), command.timeoutMs + SUPERVISOR_GRACE_MS)
    const reply = this.#channel.call(
      {
        argv: command.argv,
        cwd: command.cwd,
        environment: command.environment,
        timeoutMs: command.timeoutMs,
        maxOutputChars: command.maxOutputChars,
      },
      // The supervisor keeps each stream to the command's limit (and its markers); more means
      // someone else wrote.
      (message) =>
        message.stdout.length > command.maxOutputChars + OUTPUT_MARKER_ROOM ||
        message.stderr.length > command.maxOutputChars + REPLY_OVERHEAD_BYTES
          ? 'the supervisor sent more output than the command may keep'
          : undefined,
      (sent) => (id = sent),
    )
    if (aborted()) onAbort()
    try {
      const message = await reply.catch(() => undefined)
      if (message === undefined) return deadOutcome(this.#dead ?? 'the warm jail ended')
      this.#channel.lineLimit = IDLE_REPLY_BYTES
      // The supervisor's answer proves nothing: a command runs as the same user, can take its
      // reply channel (pidfd_getfd, ptrace) and answer early while it keeps running. So the
      // host counts what is left in the jail itself, and ends the whole jail if it is more.
      if (await this.#settled()) this.#prepareNext()
      else await this.close()
      return {
        exitCode: message.exitCode,
        signal: message.signal,
        timedOut: message.timedOut,
        cancelled: message.cancelled,
        durationMs: message.durationMs,
        stdout: message.stdout,
        stderr: message.stderr,
        stdoutDropped: message.stdoutDropped,
        stderrDropped: message.stderrDropped,
      }
    } finally {
      clearTimeout(guard)
      command.signal?.removeEventListener('abort', onAbort)
    }
  }

  /**
   * Tells the supervisor the jail is back to its idle processes, counted here: it may start the
   * next command's process ahead (jail-supervisor-main.mjs, `prepareWaiter`). Only after a
   * count, never on its own: the count after a command must find nothing but the idle ones.
   * Only once the jail stayed idle a moment: commands sent back to back (a script's) would
   * each wait for the start of a process that a direct start does at once.
   */
  #prepareNext(): void {
    clearTimeout(this.#prepareTimer)
    this.#prepareTimer = setTimeout(() => {
      if (this.alive) this.#channel.notify({ prepare: true })
    }, PREPARE_AFTER_IDLE_MS)
    this.#prepareTimer.unref()
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
}

/** The longest reply a command that keeps `maxOutputChars` of each stream can legitimately get. */
function replyLimit(maxOutputChars: number): number {
  return Math.max(
    IDLE_REPLY_BYTES,
    2 * REPLY_BYTES_PER_CHAR * maxOutputChars + REPLY_OVERHEAD_BYTES,
  )
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
