/**
 * @module jail/bounded-output
 * Keeps the first N characters a stream prints and counts the rest, so a flood of output costs
 * memory for N characters, not for the flood.
 */
import { StringDecoder } from 'node:string_decoder'

/** Characters kept per stream when nothing else is said. */
export const DEFAULT_MAX_OUTPUT_CHARS = 30_000

/** Collects one stream. */
export class BoundedOutput {
  readonly #limit: number
  readonly #decoder = new StringDecoder('utf8')
  #kept = ''
  #dropped = 0

  constructor(limit: number = DEFAULT_MAX_OUTPUT_CHARS) {
    this.#limit = limit
  }

  /** Adds a chunk: kept while under the limit, counted after. */
  push(chunk: Buffer | string): void {
    const text = typeof chunk === 'string' ? chunk : this.#decoder.write(chunk)
    const room = this.#limit - this.#kept.length
    if (room >= text.length) {
      this.#kept += text
    } else {
      this.#kept += text.slice(0, Math.max(room, 0))
      this.#dropped += text.length - Math.max(room, 0)
    }
  }

  /** Everything kept, with a marker line when characters were dropped. */
  text(): string {
    return this.#dropped === 0
      ? this.#kept
      : `${this.#kept}\n[... ${this.#dropped} more characters dropped]`
  }

  get droppedChars(): number {
    return this.#dropped
  }
}

/**
 * Keeps what a long-running program printed since it was last read, up to N characters: when
 * more arrives unread, the oldest is dropped and counted, so a chatty dev server never grows
 * without bound and the newest output is always there.
 */
export class RollingOutput {
  readonly #limit: number
  readonly #decoder = new StringDecoder('utf8')
  #unread = ''
  #dropped = 0

  constructor(limit: number = DEFAULT_MAX_OUTPUT_CHARS) {
    this.#limit = limit
  }

  push(chunk: Buffer | string): void {
    this.#unread += typeof chunk === 'string' ? chunk : this.#decoder.write(chunk)
    if (this.#unread.length > this.#limit) {
      this.#dropped += this.#unread.length - this.#limit
      this.#unread = this.#unread.slice(-this.#limit)
    }
  }

  /** The unread output, led by a marker when older unread output was dropped; then empties. */
  read(): string {
    const text =
      this.#dropped === 0
        ? this.#unread
        : `[... ${this.#dropped} earlier characters dropped]\n${this.#unread}`
    this.#unread = ''
    this.#dropped = 0
    return text
  }
}
