/**
 * @module agent/llm/model-budget
 * A Run's dollar budget. Before each model call the most it can cost is reserved (its estimated
 * input, and its whole output allowance, at the model's prices); after, the reservation is
 * settled with the real usage. A call that cannot be reserved is not made. A child's budget is
 * carved out of its parent's remainder and given back (less what the child spent) when it ends,
 * so a tree of Runs never spends more than its root's budget.
 */
import type { ModelPrice } from '../../provider/model-catalog.ts'

/** The output allowance of one model call when nothing else is said. */
export const DEFAULT_MAX_OUTPUT_TOKENS = 4096

/** Rounding slack, so that a reservation of exactly the remainder fits. */
const EPSILON = 1e-12

/** Tokens read and written by one call. */
export interface TokenCounts {
  readonly inputTokens: number
  readonly outputTokens: number
  /** Part of `inputTokens` read from the provider's cache. */
  readonly cachedInputTokens: number
}

/**
 * A cautious estimate of the tokens of `text` before a model has seen it: about three
 * characters a token, more than most tokenizers give for prose and code, so a reservation errs
 * high rather than low.
 */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 3)
}

/** What `counts` cost at `price` (dollars per million tokens). */
export function dollarsOf(price: ModelPrice, counts: TokenCounts): number {
  const cached = Math.min(counts.cachedInputTokens, counts.inputTokens)
  return (
    ((counts.inputTokens - cached) * price.input +
      cached * (price.cachedInput ?? price.input) +
      counts.outputTokens * price.output) /
    1_000_000
  )
}

/** The most one call may cost: its estimated input and its whole output allowance. */
export function reservationDollars(
  price: ModelPrice,
  inputTokens: number,
  maxOutputTokens: number,
): number {
  return dollarsOf(price, { inputTokens, outputTokens: maxOutputTokens, cachedInputTokens: 0 })
}

/** A reservation held for one call. */
export interface Reservation {
  readonly dollars: number
}

/** The budget of one Run. */
export class BudgetLedger {
  /** The Run's whole budget, in dollars. */
  readonly total: number
  #spent = 0
  #reserved = 0
  #carved = 0

  constructor(total: number) {
    this.total = total
  }

  /** Dollars spent so far (settled calls, and what ended children spent). */
  get spent(): number {
    return this.#spent
  }

  /** Dollars held for calls in flight. */
  get reserved(): number {
    return this.#reserved
  }

  /** Dollars carved out for children still running. */
  get carved(): number {
    return this.#carved
  }

  /** What is neither spent, reserved nor carved out for a child. */
  get remaining(): number {
    return Math.max(0, this.total - this.#spent - this.#reserved - this.#carved)
  }

  /** Reserves `dollars`; undefined when they are not there (nothing is reserved). */
  reserve(dollars: number): Reservation | undefined {
    if (dollars > this.remaining + EPSILON) return undefined
    this.#reserved += dollars
    return { dollars }
  }

  /** Ends a reservation with what the call really cost (which may be less, or more). */
  settle(reservation: Reservation, dollars: number): void {
    this.#reserved = Math.max(0, this.#reserved - reservation.dollars)
    this.#spent += dollars
  }

  /** Gives a reservation back unspent (the call was never made). */
  release(reservation: Reservation): void {
    this.#reserved = Math.max(0, this.#reserved - reservation.dollars)
  }

  /** Carves `dollars` out for a child; false when they are not there. */
  carve(dollars: number): boolean {
    if (dollars > this.remaining + EPSILON) return false
    this.#carved += dollars
    return true
  }

  /** A child carved `carved` and spent `spent` of it: the rest comes back. */
  returnCarve(carved: number, spent: number): void {
    this.#carved = Math.max(0, this.#carved - carved)
    this.#spent += spent
  }
}
