/**
 * @module util/line-splitter
 * Cuts a byte stream into newline-terminated lines without ever holding more than one line's
 * limit: a line that outgrows it is reported once and the splitter stops. Used wherever an
 * untrusted or crash-prone writer sends newline-delimited JSON (the warm jail's replies, the
 * code sandbox's messages, the append-only state logs).
 */

/** What a splitter reports. */
export interface LineSplitterEvents {
  /** One whole line, without its newline. */
  readonly line: (line: string) => void
  /** A line grew past the limit; no more lines are reported. */
  readonly overflow: (bytes: number) => void
}

/** Splits pushed chunks into lines of at most `maxLineBytes` bytes. */
export class LineSplitter {
  /** Longest line accepted, in bytes; may change between chunks. */
  limit: number
  readonly #events: LineSplitterEvents
  /** The start of the line not yet ended, in pieces (joined once, when it ends). */
  #pending: Buffer[] = []
  #pendingBytes = 0
  #stopped = false

  constructor(maxLineBytes: number, events: LineSplitterEvents) {
    this.limit = maxLineBytes
    this.#events = events
  }

  /** True once a line overflowed (or `stop` was called): nothing more is reported. */
  get stopped(): boolean {
    return this.#stopped
  }

  /** The bytes of the unterminated line held now. */
  get pendingBytes(): number {
    return this.#pendingBytes
  }

  /** Adds a chunk; reports every line it completes. */
  push(chunk: Buffer): void {
    let start = 0
    while (!this.#stopped) {
      const newline = chunk.indexOf(0x0a, start)
      const end = newline === -1 ? chunk.length : newline
      const bytes = this.#pendingBytes + (end - start)
      if (bytes > this.limit) {
        this.stop()
        this.#events.overflow(bytes)
        return
      }
      if (newline === -1) {
        if (end > start) {
          this.#pending.push(chunk.subarray(start, end))
          this.#pendingBytes = bytes
        }
        return
      }
      const line =
        this.#pending.length === 0
          ? chunk.toString('utf8', start, end)
          : Buffer.concat([...this.#pending, chunk.subarray(start, end)]).toString('utf8')
      this.#pending = []
      this.#pendingBytes = 0
      start = newline + 1
      this.#events.line(line)
    }
  }

  /** The unterminated rest (a line cut short), and forgets it. */
  takeRest(): string {
    const rest = Buffer.concat(this.#pending).toString('utf8')
    this.#pending = []
    this.#pendingBytes = 0
    return rest
  }

  /** Stops reporting and drops what is held. */
  stop(): void {
    this.#stopped = true
    this.#pending = []
    this.#pendingBytes = 0
  }
}
