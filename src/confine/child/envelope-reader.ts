/**
 * @module confine/child/envelope-reader
 * Reads a child's stdout as it arrives: keeps the first N bytes the function printed, drops
 * and counts the rest, and finds the envelope line after its marker wherever it lands, even
 * split across chunks or after a flood of output.
 */
import { envelopeStart, parseEnvelope, type Envelope } from './confined-protocol.ts'

/** What a child's stdout held. */
export interface ReadOutput {
  /** What the function printed, cut at the byte limit with a marker line. */
  readonly stdout: string
  /** Undefined when no envelope arrived (the child died or was killed first). */
  readonly envelope: Envelope | undefined
  /** True when the envelope was larger than its limit and was dropped. */
  readonly envelopeTooLarge: boolean
}

/** Collects one child's stdout. */
export class EnvelopeReader {
  readonly #start: Buffer
  readonly #maxOutputBytes: number
  readonly #maxEnvelopeBytes: number
  readonly #kept: Buffer[] = []
  #keptBytes = 0
  #droppedBytes = 0
  /** The tail not yet known not to begin the marker. */
  #carry = Buffer.alloc(0)
  #envelope: Buffer[] | undefined
  #envelopeBytes = 0
  #envelopeEnded = false
  #envelopeTooLarge = false

  constructor(marker: string, limits: { maxOutputBytes: number; maxEnvelopeBytes: number }) {
    // The newline before the marker belongs to neither the printed output nor the envelope.
    this.#start = Buffer.from(envelopeStart(marker))
    this.#maxOutputBytes = limits.maxOutputBytes
    this.#maxEnvelopeBytes = limits.maxEnvelopeBytes
  }

  /** True once the envelope outgrew its limit: the caller should stop the child. */
  get envelopeTooLarge(): boolean {
    return this.#envelopeTooLarge
  }

  /** Adds a chunk of stdout. */
  push(chunk: Buffer | string): void {
    const bytes = typeof chunk === 'string' ? Buffer.from(chunk) : chunk
    if (this.#envelope !== undefined) return this.#pushEnvelope(bytes)
    const scanned = Buffer.concat([this.#carry, bytes])
    const at = scanned.indexOf(this.#start)
    if (at >= 0) {
      this.#keep(scanned.subarray(0, at))
      this.#carry = Buffer.alloc(0)
      this.#envelope = []
      this.#pushEnvelope(scanned.subarray(at + this.#start.length))
      return
    }
    const safe = Math.max(0, scanned.length - (this.#start.length - 1))
    this.#keep(scanned.subarray(0, safe))
    this.#carry = Buffer.from(scanned.subarray(safe))
  }

  /** What was read, once the stream has ended. */
  finish(): ReadOutput {
    this.#keep(this.#carry)
    this.#carry = Buffer.alloc(0)
    const printed = Buffer.concat(this.#kept).toString('utf8')
    const stdout =
      this.#droppedBytes === 0
        ? printed
        : `${printed}\n[... ${this.#droppedBytes} more bytes of output dropped]`
    const line =
      this.#envelope === undefined || this.#envelopeTooLarge
        ? undefined
        : Buffer.concat(this.#envelope).toString('utf8')
    // Only a whole line counts: a child killed mid-write left no envelope.
    const complete = this.#envelopeEnded ? line?.slice(0, -1) : undefined
    return {
      stdout,
      envelope: complete === undefined ? undefined : parseEnvelope(complete),
      envelopeTooLarge: this.#envelopeTooLarge,
    }
  }

  #keep(bytes: Buffer): void {
    const room = this.#maxOutputBytes - this.#keptBytes
    if (bytes.length <= room) {
      this.#kept.push(Buffer.from(bytes))
      this.#keptBytes += bytes.length
      return
    }
    if (room > 0) this.#kept.push(Buffer.from(bytes.subarray(0, room)))
    this.#keptBytes += Math.max(room, 0)
    this.#droppedBytes += bytes.length - Math.max(room, 0)
  }

  #pushEnvelope(bytes: Buffer): void {
    // What a leftover grandchild prints after the envelope line is nobody's output.
    if (this.#envelopeEnded || this.#envelopeTooLarge || this.#envelope === undefined) return
    const newline = bytes.indexOf(0x0a)
    const part = newline >= 0 ? bytes.subarray(0, newline + 1) : bytes
    this.#envelopeBytes += part.length
    if (this.#envelopeBytes > this.#maxEnvelopeBytes) {
      this.#envelopeTooLarge = true
      this.#envelope = []
      return
    }
    this.#envelope.push(Buffer.from(part))
    this.#envelopeEnded = newline >= 0
  }
}
