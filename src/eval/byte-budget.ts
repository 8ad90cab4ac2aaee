/**
 * @module eval/byte-budget
 * Bounds the bytes capability calls hold at once. A call reserves what its answer may take
 * before it reads anything (a file's size, an HTTP response's cap) and gives it back once the
 * answer has reached the sandbox; a call that does not fit waits its turn, first come first
 * served, holding nothing while it waits. A session's budget draws on the server's, so neither one eval's `Promise.all` nor
 * many sessions at once can make the server hold more than the server's budget.
 */
import { EitriError } from '../errors/eitri-error.ts'

interface Waiter {
  readonly bytes: number
  readonly resolve: () => void
}

/** Bytes that may be held at once, optionally within a larger budget. */
export class ByteBudget {
  readonly limit: number
  readonly #parent: ByteBudget | undefined
  readonly #waiting: Waiter[] = []
  #used = 0
  #peak = 0

  constructor(limit: number, parent?: ByteBudget) {
    this.limit = limit
    this.#parent = parent
  }

  /** Bytes held now. */
  get used(): number {
    return this.#used
  }

  /** The most bytes held at once so far. */
  get peak(): number {
    return this.#peak
  }

  /**
   * Takes `bytes`, waiting until they fit here and in the parent.
   *
   * @throws EitriError `limit_exceeded` when `bytes` could never fit; `cancelled` when
   *   `signal` aborts first.
   */
  async acquire(bytes: number, signal: AbortSignal): Promise<void> {
    if (bytes > this.limit) {
      throw new EitriError(
        'limit_exceeded',
        `This needs ${bytes} bytes at once, more than the ${this.limit} capability calls may hold; ask for less (a part of a file, a smaller response).`,
      )
    }
    await this.#take(bytes, signal)
    try {
      await this.#parent?.acquire(bytes, signal)
    } catch (error) {
      this.#give(bytes)
      throw error
    }
  }

  /** Counts `bytes` already held (an answer larger than reserved), without waiting. */
  add(bytes: number): void {
    this.#used += bytes
    this.#peak = Math.max(this.#peak, this.#used)
    this.#parent?.add(bytes)
  }

  /** Gives back `bytes` taken with `acquire` or `add`. */
  release(bytes: number): void {
    this.#parent?.release(bytes)
    this.#give(bytes)
  }

  /** The reservations of one call, given back together. */
  forCall(signal: AbortSignal): CallReservation {
    return new CallReservation(this, signal)
  }

  #take(bytes: number, signal: AbortSignal): Promise<void> {
    if (signal.aborted) return Promise.reject(cancelled())
    if (this.#waiting.length === 0 && this.#used + bytes <= this.limit) {
      this.#hold(bytes)
      return Promise.resolve()
    }
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        bytes,
        resolve: () => {
          signal.removeEventListener('abort', onAbort)
          resolve()
        },
      }
      const onAbort = (): void => {
        const index = this.#waiting.indexOf(waiter)
        if (index >= 0) this.#waiting.splice(index, 1)
        reject(cancelled())
        this.#wake()
      }
      signal.addEventListener('abort', onAbort, { once: true })
      this.#waiting.push(waiter)
    })
  }

  #hold(bytes: number): void {
    this.#used += bytes
    this.#peak = Math.max(this.#peak, this.#used)
  }

  #give(bytes: number): void {
    this.#used = Math.max(this.#used - bytes, 0)
    this.#wake()
  }

  #wake(): void {
    for (let next = this.#waiting[0]; next !== undefined; next = this.#waiting[0]) {
      if (this.#used + next.bytes > this.limit) return
      this.#waiting.shift()
      this.#hold(next.bytes)
      next.resolve()
    }
  }
}

/** What one capability call holds of a budget. */
export class CallReservation {
  readonly #budget: ByteBudget
  readonly #signal: AbortSignal
  #held = 0

  constructor(budget: ByteBudget, signal: AbortSignal) {
    this.#budget = budget
    this.#signal = signal
  }

  /** Bytes held by this call. */
  get held(): number {
    return this.#held
  }

  /**
   * Makes this call hold `bytes` in all, waiting its turn. A call that needs more than it holds
   * gives back what it holds before it waits, so calls never wait on each other while holding
   * (no deadlock).
   *
   * @throws EitriError `limit_exceeded` when `bytes` could never fit; `cancelled`
   */
  async reserve(bytes: number): Promise<void> {
    if (bytes <= this.#held) return
    this.releaseAll()
    await this.#budget.acquire(bytes, this.#signal)
    this.#held = bytes
  }

  /** Makes sure at least `bytes` are counted for this call (for an answer already made). */
  atLeast(bytes: number): void {
    if (bytes <= this.#held) return
    this.#budget.add(bytes - this.#held)
    this.#held = bytes
  }

  /** Gives everything back. Idempotent. */
  releaseAll(): void {
    const held = this.#held
    this.#held = 0
    if (held > 0) this.#budget.release(held)
  }
}

function cancelled(): EitriError {
  return new EitriError('cancelled', 'The eval ended before this call could start.')
}
