/**
 * @module eval/line-writer
 * Writes the JSON-line messages between the server and its sandbox, which every session of the
 * server shares. Written in order on one pipe, one session's large messages (a 32 MiB
 * `writeFile` argument, a 16 MiB file read) would hold back everyone's small ones: another
 * session's result, the answer to a liveness ping. So there are two lanes, each a pipe of its
 * own: a message of at most {@link SMALL_LINE_CHARS} goes out at once on the small lane; larger
 * ones go on the large lane one at a time, turned into JSON only when their turn comes (so a
 * burst of them never blocks the process for long), their keys (sessions) taking turns. A large
 * message waits behind at most one of each other key's.
 *
 * Reordering is safe for this protocol: messages that overtake each other belong to different
 * sessions, or to capability calls of one eval that were in flight together (whose effects have
 * no order anyway), or are an eval's answer that makes its other messages moot.
 */
import type { Writable } from 'node:stream'

/** Longest line of the small lane, in characters (so at most three times as many bytes). */
export const SMALL_LINE_CHARS = 1024 * 1024

/** The two pipes a writer writes to. */
export interface WriterLanes {
  readonly small: Writable
  readonly large: Writable
}

/** Counters of a writer, for measurements and tests. */
export interface WriterTraffic {
  /** Characters written on the small lane. */
  readonly smallChars: number
  /** Characters written on the large lane. */
  readonly largeChars: number
  /** Large messages waiting now. */
  readonly queued: number
  /** The most large messages waiting at once so far. */
  readonly peakQueued: number
}

interface QueuedMessage {
  readonly message: object
  /** The JSON, when it was made already. */
  readonly line: string | undefined
  readonly written: (() => void) | undefined
}

/** Writes messages as JSON lines, small ones first. */
export class LineWriter {
  readonly #lanes: WriterLanes
  readonly #smallLineChars: number
  /** Large messages waiting, by key; a key's turn comes in insertion order. */
  readonly #queues = new Map<string, QueuedMessage[]>()
  /** A large message is being written. */
  #writing = false
  /** The key of the last large message written. */
  #lastKey: string | undefined
  #closed = false
  #peakQueued = 0
  #smallChars = 0
  #largeChars = 0

  constructor(lanes: WriterLanes, options: { readonly smallLineChars?: number } = {}) {
    this.#lanes = lanes
    this.#smallLineChars = options.smallLineChars ?? SMALL_LINE_CHARS
  }

  /** Large messages waiting their turn. */
  get queued(): number {
    let count = 0
    for (const queue of this.#queues.values()) count += queue.length
    return count
  }

  /** What has gone through so far: characters per lane, the most large messages waiting at once. */
  get traffic(): WriterTraffic {
    return {
      smallChars: this.#smallChars,
      largeChars: this.#largeChars,
      queued: this.queued,
      peakQueued: this.#peakQueued,
    }
  }

  /**
   * Writes `message` as one line; false when the lanes are gone. `written` is called once the
   * line has been handed to its pipe, or at once when it cannot be.
   */
  write(
    message: object,
    options: { readonly key?: string; readonly written?: () => void } = {},
  ): boolean {
    if (!this.#writable(this.#lanes.small) || !this.#writable(this.#lanes.large)) {
      options.written?.()
      return false
    }
    let line: string | undefined
    // Made into JSON now only if it is likely small: a large one waits its turn first.
    if (roughChars(message) <= this.#smallLineChars) {
      line = JSON.stringify(message)
      if (line.length <= this.#smallLineChars)
        return this.#send(this.#lanes.small, line, options.written)
    }
    const key = options.key ?? ''
    const queued: QueuedMessage = { message, line, written: options.written }
    const queue = this.#queues.get(key)
    if (queue === undefined) this.#queues.set(key, [queued])
    else queue.push(queued)
    this.#peakQueued = Math.max(this.#peakQueued, this.queued)
    this.#pump()
    return true
  }

  /** Drops the messages waiting (calling their `written`) and writes nothing more. Idempotent. */
  close(): void {
    this.#closed = true
    const queues = [...this.#queues.values()]
    this.#queues.clear()
    for (const queue of queues) for (const queued of queue) queued.written?.()
  }

  #pump(): void {
    if (this.#writing || this.#closed) return
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
    const sent = this.#send(
      this.#lanes.large,
      queued.line ?? JSON.stringify(queued.message),
      () => {
        this.#writing = false
        queued.written?.()
        if (this.#writable(this.#lanes.large)) this.#pump()
        else this.close()
      },
    )
    if (!sent) this.close()
  }

  /** Hands one line to `lane`; `written` runs exactly once. */
  #send(lane: Writable, line: string, written: (() => void) | undefined): boolean {
    if (!this.#writable(lane)) {
      written?.()
      return false
    }
    try {
      lane.write(`${line}\n`, () => written?.())
      if (lane === this.#lanes.small) this.#smallChars += line.length + 1
      else this.#largeChars += line.length + 1
      return true
    } catch {
      written?.()
      return false
    }
  }

  #writable(lane: Writable): boolean {
    return !this.#closed && !lane.destroyed && lane.writable
  }
}

/**
 * About how many characters `message`'s JSON takes, without making it: the lengths of its
 * strings (two levels deep, as the protocol's messages are) and a little for the rest.
 */
function roughChars(message: object, depth = 0): number {
  let chars = 16
  for (const value of Object.values(message) as unknown[]) {
    if (typeof value === 'string') chars += value.length + 16
    else if (typeof value === 'object' && value !== null && depth < 2)
      chars += roughChars(value, depth + 1)
    else chars += 32
  }
  return chars
}
