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
  #unread = 0

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

  /** What was kept since the last call (for polling a background job). */
  unread(): string {
    const fresh = this.#kept.slice(this.#unread)
    this.#unread = this.#kept.length
    return fresh
  }

  get droppedChars(): number {
    return this.#dropped
  }
}
