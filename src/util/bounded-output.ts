/**
 * @module util/bounded-output
 * Keeps the beginning and the end of what a stream prints, with runs of identical lines
 * collapsed, and counts what was dropped between: a flood of output costs memory for N
 * characters, not for the flood, and the end of a failing command's output is still there.
 */
import { StringDecoder } from 'node:string_decoder'
import { OutputWindow } from './output-window.mjs'

/** Characters kept per stream when nothing else is said. */
export const DEFAULT_MAX_OUTPUT_CHARS = 30_000

/** Collects one stream: its head and tail (see {@link OutputWindow}). */
export class BoundedOutput {
  readonly #window: OutputWindow

  constructor(limit: number = DEFAULT_MAX_OUTPUT_CHARS) {
    this.#window = new OutputWindow(limit)
  }

  /** Adds a chunk. */
  push(chunk: Buffer | string): void {
    this.#window.push(chunk)
  }

  /** The head, a marker where the middle was dropped, and the tail; repeated lines counted. */
  text(): string {
    return this.#window.text()
  }

  /** Characters dropped from the middle. */
  get droppedChars(): number {
    return this.#window.droppedChars
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
