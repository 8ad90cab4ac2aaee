/**
 * @module util/serial-queue
 * Work that must not interleave (syncs and mounts of one jail, writers to main, one SQLite
 * connection's transactions) runs one piece at a time, in the order asked. A piece that fails
 * fails its own caller only; the next one runs all the same.
 */

/** A queue of asynchronous work run one at a time. */
export class SerialQueue {
  #tail: Promise<unknown> = Promise.resolve()

  /**
   * Runs `work` once everything queued before it has settled.
   *
   * @example
   * const queue = new SerialQueue()
   * await queue.run(() => writeState())
   */
  run<T>(work: () => Promise<T>): Promise<T> {
    const next = this.#tail.then(work, work)
    this.#tail = next.catch(() => undefined)
    return next
  }

  /** Resolves once everything queued so far has settled (never rejects). */
  settled(): Promise<void> {
    return this.#tail.then(() => undefined)
  }
}
