/**
 * @module agent/llm/model-budget
 * A Run's dollar budget. Before each model call the most it can cost is reserved (its estimated
 * input, and its whole output allowance, at the model's prices); after, the reservation is
 * settled with the real usage. A call that cannot be reserved is not made. A child's budget is
 * carved out of its parent's remainder and given back (less what the child spent) when it ends,
 * so a tree of Runs never spends more than its root's budget. The one way past it is a provider
 * reporting more than was reserved: that excess is charged up the tree at once and the Run
 * makes no further call.
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
 * A cautious estimate of the tokens of `text` before a model has seen it. ASCII counts about
 * three characters a token, more than most tokenizers give for prose and code; every other
 * character counts its UTF-8 bytes, an upper bound for byte-level tokenizers (CJK text is about
 * one token a character, where three characters a token would reserve a third of the cost).
 * A reservation errs high rather than low; a provider reporting more is handled at settlement.
 */
export function estimateTokens(text: string): number {
  let ascii = 0
  for (let index = 0; index < text.length; index++) {
    if (text.charCodeAt(index) < 0x80) ascii++
  }
  return Math.ceil(ascii / 3) + (Buffer.byteLength(text, 'utf8') - ascii)
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

/** Dollars as a person reads them: at most six decimals, no trailing zeros. */
export function dollarsText(dollars: number): string {
  return Number(dollars.toFixed(6)).toString()
}

/** A reservation held for one call. */
export interface Reservation {
  readonly dollars: number
}

/**
 * The budget of one Run. A child's ledger names its parent's: the child's budget is carved out
 * of the parent's when it starts ({@link BudgetLedger.carve}) and what is left goes back when it
 * ends ({@link BudgetLedger.end}).
 */
export class BudgetLedger {
  #total: number
  readonly #parent: BudgetLedger | undefined
  #spent = 0
  #reserved = 0
  #carved = 0
  /** What this ledger spent beyond its total, already charged to its parent. */
  #passedUp = 0
  /** Children carved out and not back yet. */
  #children = 0
  /** The Run stopped: it carves nothing more, and its carve goes back once its children are. */
  #ended = false
  /** Its carve went back to its parent. */
  #returned = false

  constructor(total: number, parent?: BudgetLedger) {
    this.#total = total
    this.#parent = parent
  }

  /** The Run's whole budget, in dollars. */
  get total(): number {
    return this.#total
  }

  /**
   * Lowers the whole budget to `total` before the Run spends anything (a child given no budget
   * of its own, started when its parent had less left than at its hire). Never raises it.
   */
  lowerTotal(total: number): void {
    if (total < this.#total) this.#total = total
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
    return Math.max(0, this.#total - this.#spent - this.#reserved - this.#carved)
  }

  /** Reserves `dollars`; undefined when they are not there (nothing is reserved). */
  reserve(dollars: number): Reservation | undefined {
    if (dollars > this.remaining + EPSILON) return undefined
    this.#reserved += dollars
    return { dollars }
  }

  /**
   * Ends a reservation with what the call really cost, and answers what it cost beyond the
   * reservation (0 when it fitted). A provider may report more than was reserved (an input
   * longer in tokens than estimated): the excess is spent all the same, so it is charged, and
   * what this Run spent beyond its whole budget is charged to its parent at once (and on up),
   * so no other Run of the tree reserves money that is gone. The caller makes no further call.
   */
  settle(reservation: Reservation, dollars: number): number {
    this.#reserved = Math.max(0, this.#reserved - reservation.dollars)
    this.#spent += dollars
    this.#passUp()
    return Math.max(0, dollars - reservation.dollars)
  }

  /** Gives a reservation back unspent (the call was never made). */
  release(reservation: Reservation): void {
    this.#reserved = Math.max(0, this.#reserved - reservation.dollars)
  }

  /**
   * Carves `dollars` out for a child; false when they are not there, or when this Run has
   * ended (what it had left went back, or goes back, to its own parent).
   */
  carve(dollars: number): boolean {
    if (this.#ended || dollars > this.remaining + EPSILON) return false
    this.#carved += dollars
    this.#children += 1
    return true
  }

  /** A child carved `carved` and spent `spent` of it: the rest comes back. */
  returnCarve(carved: number, spent: number): void {
    this.#carved = Math.max(0, this.#carved - carved)
    this.#children = Math.max(0, this.#children - 1)
    this.#spent += spent
    this.#passUp()
    this.#returnWhenIdle()
  }

  /**
   * Ends a Run's ledger: its carve goes back to its parent, charged with what it spent (less
   * the excess already charged on the way). A Run's program may end before the children it
   * hired without waiting (they run on, and the Run waits for them after): their carves stay
   * out until they are back, so the parent never gets money a grandchild is still spending,
   * and what they spent is charged to it.
   */
  end(): void {
    this.#ended = true
    this.#returnWhenIdle()
  }

  #returnWhenIdle(): void {
    if (!this.#ended || this.#returned || this.#children > 0) return
    this.#returned = true
    this.#parent?.returnCarve(this.#total, this.#spent - this.#passedUp)
  }

  /**
   * Charges the parent what was spent beyond the total and not charged yet. What is carved out
   * for children counts as spent here: a child that went past its carve spent all of it.
   */
  #passUp(): void {
    if (this.#parent === undefined) return
    const excess = Math.max(0, this.#spent + this.#carved - this.#total) - this.#passedUp
    if (excess <= EPSILON) return
    this.#passedUp += excess
    this.#parent.#overdraw(excess)
  }

  /** A child spent `dollars` beyond its carve: spent here now, on top of the carve it holds. */
  #overdraw(dollars: number): void {
    this.#spent += dollars
    this.#passUp()
  }
}
