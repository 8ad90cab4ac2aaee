/**
 * @module util/bounded-spawn
 * The one way eitri starts a short-lived child program: without a shell, in a process group of
 * its own, its output bounded, and the whole group killed at its deadline or when its signal
 * aborts, so nothing it started (a grandchild, a daemon in its group) outlives it by accident.
 * The jail, unconfined runs, confined calls and git all start their programs through it.
 */
import { spawn, type ChildProcess, type StdioPipe } from 'node:child_process'
import type { Readable, Writable } from 'node:stream'
import { BoundedOutput, DEFAULT_MAX_OUTPUT_CHARS } from './bounded-output.ts'

/** Where one output stream goes: pushed every chunk; may ask for the program to be stopped. */
export interface OutputSink {
  push(chunk: Buffer): void
  /** True once the sink took all it may: the group is killed and the exit says `overflowed`. */
  readonly overflowed?: boolean
}

/** How a bounded child ended. */
export interface BoundedExit {
  /** The exit code; null when it was killed by a signal or never started. */
  readonly exitCode: number | null
  readonly signal: string | null
  /** Its deadline passed and the group was stopped. */
  readonly timedOut: boolean
  /** Its signal aborted and the group was killed. */
  readonly cancelled: boolean
  /** An output sink overflowed and the group was killed. */
  readonly overflowed: boolean
  /** Of those three, the one that stopped it first. */
  readonly stoppedBy?: 'timeout' | 'cancellation' | 'output'
  readonly durationMs: number
  /** Set when the program could not be started at all (the spawn error's message). */
  readonly spawnError?: string
  /** The spawn error's code (`ENOENT` for a program that is not there, `EACCES`, ...). */
  readonly spawnErrorCode?: string
}

/** What starting one needs. */
export interface BoundedSpawnOptions<C extends ProgramChild = ChildProcess> {
  readonly cwd?: string | undefined
  /** The whole environment (nothing of the caller's is added). */
  readonly env?: Readonly<Record<string, string | undefined>> | undefined
  readonly uid?: number | undefined
  readonly gid?: number | undefined
  /** Written to stdin, which is then closed. */
  readonly stdin?: string | Buffer | undefined
  /** No stdin at all (else a pipe). */
  readonly noStdin?: boolean | undefined
  /** Keeps stdin open for `write` (after writing `stdin`, if given). */
  readonly keepStdinOpen?: boolean | undefined
  /** Pipes after stderr (fd 3, 4, ...), left to the caller through `child.stdio`. */
  readonly extraPipes?: number | undefined
  /**
   * A child already started the way this would start it (its own process group, stdin, stdout
   * and stderr piped, no event of its missed yet), adopted instead of spawning `command`.
   */
  readonly spawned?: C | undefined
  /** Kills the group when it aborts (`cancelled`). */
  readonly signal?: AbortSignal | undefined
  /** Undefined: no deadline. */
  readonly timeoutMs?: number | undefined
  /**
   * Called at the deadline before the kill: true when it interrupted the program softly, which
   * then gets `interruptGraceMs` to end (a test runner printing its summary) before the kill.
   */
  readonly interrupt?: ((child: BoundedChild<C>) => boolean) | undefined
  /** @default 1000 */
  readonly interruptGraceMs?: number | undefined
  /**
   * How the group is killed. @default SIGKILL to the whole group (falling back to the child)
   */
  readonly kill?: ((pid: number) => void) | undefined
  /**
   * Kills the group once the program exited, and waits at most `closeGraceMs` for its streams:
   * a descendant that left the group and holds them is not waited for. Without it the exit
   * waits for every stream to close (the deadline still bounds that).
   */
  readonly killOnExit?: boolean | undefined
  /** @default 2000 */
  readonly closeGraceMs?: number | undefined
  /** @default a head-and-tail window of `maxOutputChars`; `'ignore'` for none */
  readonly stdout?: OutputSink | 'ignore' | undefined
  /** @default a head-and-tail window of `maxOutputChars` */
  readonly stderr?: OutputSink | undefined
  /** Characters kept of each stream by the default windows. @default DEFAULT_MAX_OUTPUT_CHARS */
  readonly maxOutputChars?: number | undefined
  /** Called with every chunk as it arrives (after its sink took it). */
  readonly onOutput?: ((stream: 'stdout' | 'stderr', chunk: Buffer) => void) | undefined
}

/**
 * What a child process is seen through: Node's own, or a launcher forked by the jail's spawner
 * (jail/launcher-spawner.ts), adopted with `spawned`.
 */
export interface ProgramChild {
  readonly pid?: number | undefined
  readonly stdin: Writable | null
  readonly stdout: Readable | null
  readonly stderr: Readable | null
  readonly stdio: readonly (Readable | Writable | null | undefined)[]
  readonly exitCode: number | null
  readonly signalCode: NodeJS.Signals | null
  kill(signal?: NodeJS.Signals): boolean
  ref(): void
  unref(): void
  once(
    event: 'exit',
    listener: (code: number | null, signal: NodeJS.Signals | null) => void,
  ): unknown
  once(
    event: 'close',
    listener: (code: number | null, signal: NodeJS.Signals | null) => void,
  ): unknown
  once(event: 'error', listener: (error: Error) => void): unknown
}

const DEFAULT_INTERRUPT_GRACE_MS = 1000
const DEFAULT_CLOSE_GRACE_MS = 2000

/** SIGKILL to process group `pid`; false when there is none (it is gone, or leads no group). */
export function killProcessGroup(pid: number): boolean {
  try {
    process.kill(-pid, 'SIGKILL')
    return true
  } catch {
    return false
  }
}

/** A running child, started by {@link startBounded}. */
export class BoundedChild<C extends ProgramChild = ChildProcess> {
  /** The node child: for pipes given by `extraPipes`, and its events. */
  readonly child: C
  readonly stdout: OutputSink | undefined
  readonly stderr: OutputSink
  /** Resolves once the program ended (see `killOnExit` for its streams); never rejects. */
  readonly exited: Promise<BoundedExit>
  readonly #kill: (pid: number) => void
  #timedOut = false
  #cancelled = false
  #overflowed = false
  #stoppedBy: BoundedExit['stoppedBy']

  constructor(command: string, args: readonly string[], options: BoundedSpawnOptions<C> = {}) {
    const started = performance.now()
    const limit = options.maxOutputChars ?? DEFAULT_MAX_OUTPUT_CHARS
    this.stdout =
      options.stdout === 'ignore' ? undefined : (options.stdout ?? new BoundedOutput(limit))
    this.stderr = options.stderr ?? new BoundedOutput(limit)
    this.#kill =
      options.kill ??
      ((pid) => {
        if (!killProcessGroup(pid)) this.child.kill('SIGKILL')
      })
    const stdinMode = options.noStdin === true ? 'ignore' : 'pipe'
    const extra = Array.from({ length: options.extraPipes ?? 0 }, (): StdioPipe => 'pipe')
    this.child =
      options.spawned ??
      // Without `spawned`, C is Node's own child (the default).
      (spawn(command, [...args], {
        stdio: [stdinMode, this.stdout === undefined ? 'ignore' : 'pipe', 'pipe', ...extra],
        // Its own process group, so one kill reaches everything it started there.
        detached: true,
        ...(options.cwd === undefined ? {} : { cwd: options.cwd }),
        ...(options.env === undefined ? {} : { env: options.env }),
        ...(options.uid === undefined ? {} : { uid: options.uid }),
        ...(options.gid === undefined ? {} : { gid: options.gid }),
      }) as unknown as C)
    const take = (stream: 'stdout' | 'stderr', sink: OutputSink, from: Readable | null): void => {
      from?.on('data', (chunk: Buffer) => {
        if (this.#overflowed) return
        sink.push(chunk)
        options.onOutput?.(stream, chunk)
        if (sink.overflowed === true) {
          this.#overflowed = true
          this.#stoppedBy ??= 'output'
          this.kill()
        }
      })
    }
    if (this.stdout !== undefined) take('stdout', this.stdout, this.child.stdout)
    take('stderr', this.stderr, this.child.stderr)
    const stdin = this.child.stdin
    if (stdin !== null) {
      // A program that exits without reading its input makes the write fail with EPIPE.
      stdin.on('error', () => undefined)
      const input = typeof options.stdin === 'string' || Buffer.isBuffer(options.stdin)
      if (options.keepStdinOpen === true) {
        if (input) stdin.write(options.stdin)
      } else stdin.end(input ? options.stdin : undefined)
    }
    let grace: NodeJS.Timeout | undefined
    const timer =
      options.timeoutMs === undefined
        ? undefined
        : setTimeout(() => {
            this.#timedOut = true
            this.#stoppedBy ??= 'timeout'
            if (options.interrupt === undefined || !options.interrupt(this)) return this.kill()
            grace = setTimeout(
              () => this.kill(),
              options.interruptGraceMs ?? DEFAULT_INTERRUPT_GRACE_MS,
            )
            grace.unref()
          }, options.timeoutMs)
    const onAbort = (): void => {
      this.#cancelled = true
      this.#stoppedBy ??= 'cancellation'
      this.kill()
    }
    options.signal?.addEventListener('abort', onAbort, { once: true })
    if (options.signal?.aborted === true) onAbort()
    this.exited = new Promise<BoundedExit>((resolve) => {
      const finish = (
        exitCode: number | null,
        signal: string | null,
        error?: NodeJS.ErrnoException,
      ): void => {
        clearTimeout(timer)
        clearTimeout(grace)
        options.signal?.removeEventListener('abort', onAbort)
        resolve({
          exitCode,
          signal,
          timedOut: this.#timedOut,
          cancelled: this.#cancelled,
          overflowed: this.#overflowed,
          ...(this.#stoppedBy === undefined ? {} : { stoppedBy: this.#stoppedBy }),
          durationMs: performance.now() - started,
          ...(error === undefined
            ? {}
            : {
                spawnError: error.message,
                ...(error.code === undefined ? {} : { spawnErrorCode: error.code }),
              }),
        })
      }
      this.child.once('error', (error) => finish(null, null, error))
      if (options.killOnExit === true) {
        this.child.once('exit', (code, signal) => {
          // Nothing it started outlives it, even when it ended on its own.
          this.#killGroup()
          void closedWithin(this.child, options.closeGraceMs ?? DEFAULT_CLOSE_GRACE_MS).then(() =>
            finish(code, signal),
          )
        })
      } else this.child.once('close', (code, signal) => finish(code, signal))
    })
  }

  /** The child's process id, which is also its group's (undefined if it never started). */
  get pid(): number | undefined {
    return this.child.pid
  }

  /** True until the program has exited. */
  get running(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null
  }

  /** Writes to the program's stdin (only when started with `keepStdinOpen`). */
  write(text: string): void {
    this.child.stdin?.write(text)
  }

  /**
   * Closes eitri's end of the program's stdout, as a pipeline's reader that exits does: its
   * next write gets SIGPIPE (or EPIPE where it ignores that). What it wrote but eitri has not
   * read yet is dropped.
   */
  closeStdout(): void {
    this.child.stdout?.destroy()
  }

  /** Kills the whole group now, while the program runs. */
  kill(): void {
    if (this.running) this.#killGroup()
  }

  #killGroup(): void {
    if (this.child.pid !== undefined) this.#kill(this.child.pid)
    // A launcher whose process id is on its way kills its group once it knows it.
    else this.child.kill('SIGKILL')
  }
}

/** Starts `command` with `args` (see {@link BoundedSpawnOptions}). */
export function startBounded(
  command: string,
  args: readonly string[],
  options: BoundedSpawnOptions = {},
): BoundedChild {
  return new BoundedChild(command, args, options)
}

/** A finished run with its output windows. */
export interface BoundedRun extends BoundedExit {
  /** The head and tail of stdout (empty when a custom sink took it). */
  readonly stdout: string
  readonly stderr: string
  /** True when either window dropped part of its stream. */
  readonly truncated: boolean
}

/** Runs `command` to its end and answers its exit with its output windows. Never rejects. */
export async function runBounded(
  command: string,
  args: readonly string[],
  options: Omit<BoundedSpawnOptions, 'stdout' | 'stderr' | 'keepStdinOpen'> = {},
): Promise<BoundedRun> {
  const child = new BoundedChild(command, args, options)
  const exit = await child.exited
  const stdout = child.stdout as BoundedOutput
  const stderr = child.stderr as BoundedOutput
  return {
    ...exit,
    stdout: stdout.text(),
    stderr: stderr.text(),
    truncated: stdout.droppedChars + stderr.droppedChars > 0,
  }
}

/** Waits until the child's streams closed, or `graceMs`; then lets go of them. */
async function closedWithin(child: ProgramChild, graceMs: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined
  await Promise.race([
    new Promise<void>((resolve) => child.once('close', () => resolve())),
    new Promise<void>((resolve) => {
      timer = setTimeout(resolve, graceMs)
    }),
  ])
  clearTimeout(timer)
  for (const stream of [child.stdout, child.stderr]) stream?.destroy()
}

/**
 * Collects a stream whole, in bytes, up to `maxBytes`: past that it keeps nothing more and says
 * `overflowed` (for output read whole, like a git blob).
 */
export class ByteCapture implements OutputSink {
  readonly #maxBytes: number
  readonly #chunks: Buffer[] = []
  #bytes = 0
  #overflowed = false

  constructor(maxBytes: number) {
    this.#maxBytes = maxBytes
  }

  push(chunk: Buffer): void {
    if (this.#overflowed) return
    if (this.#bytes + chunk.byteLength > this.#maxBytes) {
      this.#overflowed = true
      return
    }
    this.#bytes += chunk.byteLength
    this.#chunks.push(chunk)
  }

  get overflowed(): boolean {
    return this.#overflowed
  }

  /** What was collected (all of it unless `overflowed`). */
  bytes(): Buffer {
    return Buffer.concat(this.#chunks, this.#bytes)
  }
}
