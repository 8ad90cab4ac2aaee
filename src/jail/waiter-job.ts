/**
 * @module jail/waiter-job
 * eitri's side of the job waiter (job-waiter-script.ts): the records it sends, the frames it
 * reads back, and one job seen as a child process, so a job in a jail started ahead runs
 * through the same bounded-output, deadline and kill code as any other start.
 */
import { EventEmitter } from 'node:events'
import os from 'node:os'
import { PassThrough, type Readable } from 'node:stream'
import type { ProgramChild } from '../util/bounded-spawn.ts'

/** How long a job asked to die may take to say it ended before its whole jail is killed. */
const KILL_GRACE_MS = 2000

/** The longest payload a frame of the waiter may carry (it reads at most 64 KiB at a time). */
const MAX_FRAME_BYTES = 64 * 1024

/** A record for the waiter: a type byte, a ten-digit length, the payload. */
export function waiterRecord(type: 'C' | 'K', payload: Buffer): Buffer {
  return Buffer.concat([Buffer.from(`${type}${String(payload.length).padStart(10, '0')}`), payload])
}

/**
 * The record of one job: in `cwd`, with exactly `environment`, running `argv`. Undefined when no
 * program can receive it (a NUL in a word).
 */
export function jobRecord(
  cwd: string,
  environment: Readonly<Record<string, string>>,
  argv: readonly string[],
): Buffer | undefined {
  const entries = Object.entries(environment).map(([name, value]) => `${name}=${value}`)
  const words = [cwd, String(entries.length), ...entries, ...argv]
  if (argv.length === 0 || words.some((word) => word.includes('\0'))) return undefined
  const body = Buffer.from(words.map((word) => `${word}\0`).join(''))
  if (body.length > 9_999_999_999) return undefined
  return waiterRecord('C', body)
}

/** One frame of the waiter's. */
export interface WaiterFrame {
  readonly type: 'O' | 'E' | 'X' | 'R'
  readonly payload: Buffer
}

/** Cuts the waiter's stdout into frames; throws on anything the waiter never writes. */
export class WaiterFrames {
  #buffered: Buffer = Buffer.alloc(0)

  push(chunk: Buffer): WaiterFrame[] {
    this.#buffered = this.#buffered.length === 0 ? chunk : Buffer.concat([this.#buffered, chunk])
    const frames: WaiterFrame[] = []
    while (this.#buffered.length >= 5) {
      const type = String.fromCharCode(this.#buffered[0] ?? 0)
      const size = this.#buffered.readUInt32BE(1)
      if (!isFrameType(type) || size > MAX_FRAME_BYTES)
        throw new Error(`the jail's waiter wrote an unknown frame (${JSON.stringify(type)})`)
      if (this.#buffered.length < 5 + size) break
      frames.push({ type, payload: this.#buffered.subarray(5, 5 + size) })
      this.#buffered = this.#buffered.subarray(5 + size)
    }
    return frames
  }
}

function isFrameType(type: string): type is WaiterFrame['type'] {
  return type === 'O' || type === 'E' || type === 'X' || type === 'R'
}

/** What a job needs of its jail. */
export interface WaiterLine {
  /** Writes a record to the waiter; false when the jail ended. */
  send(record: Buffer): boolean
  /** Kills the whole jail (its waiter did not answer). */
  end(): void
  /** Whether the jail keeps the event loop alive. */
  hold(held: boolean): void
}

/** One job of a waiter, as a child process; see the module comment. */
export class WaiterJob extends EventEmitter implements ProgramChild {
  /** The job reads /dev/null: its input is never eitri's to give. */
  readonly stdin = null
  readonly stdout = new PassThrough()
  readonly stderr = new PassThrough()
  readonly stdio: readonly (Readable | null)[] = [null, this.stdout, this.stderr]
  /** No host process of its own: a kill goes through the waiter. */
  readonly pid = undefined
  #exitCode: number | null = null
  #signalCode: NodeJS.Signals | null = null
  #ended = false
  #grace: NodeJS.Timeout | undefined
  readonly #line: WaiterLine

  constructor(line: WaiterLine) {
    super()
    this.#line = line
  }

  get exitCode(): number | null {
    return this.#exitCode
  }

  get signalCode(): NodeJS.Signals | null {
    return this.#signalCode
  }

  /**
   * SIGKILL ends every process of the job (and, if the waiter does not say so in time, the
   * whole jail); any other signal goes to the job's process group.
   */
  kill(signal: NodeJS.Signals = 'SIGTERM'): boolean {
    if (this.#ended) return false
    const number = os.constants.signals[signal]
    if (!this.#line.send(waiterRecord('K', Buffer.from(String(number))))) {
      this.#line.end()
      return true
    }
    if (signal === 'SIGKILL' && this.#grace === undefined) {
      this.#grace = setTimeout(() => this.#line.end(), KILL_GRACE_MS)
      this.#grace.unref()
    }
    return true
  }

  ref(): void {
    this.#line.hold(true)
  }

  unref(): void {
    this.#line.hold(false)
  }

  /** Output the waiter relayed. */
  output(stream: 'stdout' | 'stderr', bytes: Buffer): void {
    if (!this.#ended) this[stream].write(Buffer.from(bytes))
  }

  /** The waiter's word that the job ended, with its wait status. */
  exited(status: number): void {
    const signal = status & 0x7f
    this.#end(signal === 0 ? (status >> 8) & 0xff : null, signal === 0 ? null : signalName(signal))
  }

  /** The jail ended while the job ran: it ended with it. */
  lost(): void {
    this.#end(null, 'SIGKILL')
  }

  #end(code: number | null, signal: NodeJS.Signals | null): void {
    if (this.#ended) return
    this.#ended = true
    clearTimeout(this.#grace)
    this.#exitCode = code
    this.#signalCode = signal
    this.emit('exit', code, signal)
    let open = 2
    const closed = (): void => {
      if (--open === 0) this.emit('close', code, signal)
    }
    for (const stream of [this.stdout, this.stderr]) {
      stream.once('end', closed)
      stream.end()
      // Nobody reads it: its end is still its end.
      if (stream.listenerCount('data') === 0) stream.resume()
    }
  }
}

function signalName(number: number): NodeJS.Signals | null {
  for (const [name, value] of Object.entries(os.constants.signals)) {
    if (value === number) return name as NodeJS.Signals
  }
  return null
}
