/**
 * @module eval/line-writer
 * Writes the JSON lines of the pipe between the server and its sandbox, which every session of
 * the server shares. Written in order, one session's large messages (a 32 MiB `writeFile`
 * argument, a 16 MiB file read) would hold back everyone's small ones: another session's result,
 * the answer to a liveness ping. So a line of at most {@link SMALL_LINE_CHARS} goes out at once,
 * while larger lines wait in a queue per key (the session) and go one at a time, the keys taking
 * turns. A small line then waits behind at most one large line, a large one behind at most one
 * of each other key's.
 *
 * Reordering is safe for this protocol: lines that overtake each other belong to different
 * sessions, or to capability calls of one eval that were in flight together (whose effects have
 * no order anyway), or answer a ping.
 */
import type { Writable } from 'node:stream'

/** Longest line written at once, in characters; longer lines take turns. */
export const SMALL_LINE_CHARS = 1024 * 1024

interface QueuedLine {
  readonly line: string
  readonly written: (() => void) | undefined
}

/** Writes lines to `stream`, small ones first. */
export class LineWriter {
  readonly #stream: Writable
  readonly #smallLineChars: number
  /** Large lines waiting, by key; a key's turn comes in insertion order. */
  readonly #queues = new Map<string, QueuedLine[]>()
  /** A large line is being written. */
  #writing = false
  /** The key of the last large line written. */
  #lastKey: string | undefined
  #closed = false

  constructor(stream: Writable, options: { readonly smallLineChars?: number } = {}) {
    this.#stream = stream
    this.#smallLineChars = options.smallLineChars ?? SMALL_LINE_CHARS
  }

  /** Large lines waiting their turn. */
  get queued(): number {
    let count = 0
    for (const queue of this.#queues.values()) count += queue.length
    return count
  }

  /**
   * Writes `line` (without its newline); false when the stream is gone. `written` is called once
   * the line has been handed to the stream's file, or at once when it cannot be.
   */
  write(
    line: string,
    options: { readonly key?: string; readonly written?: () => void } = {},
  ): boolean {
    if (!this.#writable()) {
      options.written?.()
      return false
    }
    if (line.length <= this.#smallLineChars) return this.#send(line, options.written)
    const key = options.key ?? ''
    const queue = this.#queues.get(key)
    if (queue === undefined) this.#queues.set(key, [{ line, written: options.written }])
    else queue.push({ line, written: options.written })
    this.#pump()
    return true
  }

  /** Drops the lines waiting (calling their `written`) and writes nothing more. Idempotent. */
  close(): void {
    this.#closed = true
    const queues = [...this.#queues.values()]
    this.#queues.clear()
    for (const queue of queues) for (const queued of queue) queued.written?.()
  }

  #pump(): void {
    if (this.#writing) return
    // The key that had the last turn goes again only if no other key waits.
    let key: string | undefined
    for (const candidate of this.#queues.keys()) {
      key ??= candidate
      if (candidate !== this.#lastKey) {
        key = candidate
        break
      }
    }
    if (key === undefined) return
    const queue = this.#queues.get(key) ?? []
    const queued = queue.shift()
    // The key goes to the back of the line, behind the keys that waited.
    this.#queues.delete(key)
    if (queue.length > 0) this.#queues.set(key, queue)
    if (queued === undefined) return this.#pump()
    this.#lastKey = key
    this.#writing = true
    const sent = this.#send(queued.line, () => {
      this.#writing = false
      queued.written?.()
      if (this.#writable()) this.#pump()
      else this.close()
    })
    if (!sent) this.close()
  }

  /** Hands one line to the stream; `written` runs exactly once. */
  #send(line: string, written: (() => void) | undefined): boolean {
    if (!this.#writable()) {
      written?.()
      return false
    }
    try {
      this.#stream.write(`${line}\n`, () => written?.())
      return true
    } catch {
      written?.()
      return false
    }
  }

  #writable(): boolean {
    return !this.#closed && !this.#stream.destroyed && this.#stream.writable
  }
}
