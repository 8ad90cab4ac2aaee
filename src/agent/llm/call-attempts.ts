/**
 * @module agent/llm/call-attempts
 * The reservations of one model call and of its retries. The AI SDK retries a failed call (a
 * 429, a 500, a connection dropped mid-answer) up to twice inside one `generateText`, and a
 * failed attempt may have been billed all the same, so each attempt after the first reserves as
 * much again as the first; a retry the budget cannot cover is not made, and the call fails with
 * why. A failed attempt's reservation counts as spent, as a failed call's does.
 */
import { dollarsText, type BudgetLedger, type Reservation } from './model-budget.ts'

/** One model call's attempts; see the module comment. */
export class CallAttempts {
  readonly #ledger: BudgetLedger
  readonly #held: Reservation[]
  #calls = 0

  /** `first`: the call's reservation, made before its intent was written. */
  constructor(ledger: BudgetLedger, first: Reservation) {
    this.#ledger = ledger
    this.#held = [first]
  }

  /**
   * Before each provider call: the first takes the call's reservation, each retry reserves as
   * much again, and throws (the SDK does not retry that) when the budget cannot cover it.
   */
  attempt(): void {
    this.#calls += 1
    if (this.#calls === 1) return
    const dollars = this.#held[0]?.dollars ?? 0
    const more = this.#ledger.reserve(dollars)
    if (more === undefined)
      throw new Error(
        `not retried: another attempt needs $${dollarsText(dollars)} reserved and the Run has $${dollarsText(this.#ledger.remaining)} left`,
      )
    this.#held.push(more)
  }

  /** Attempts after the first that reached the provider's gate. */
  get retries(): number {
    return Math.max(0, this.#calls - 1)
  }

  /**
   * The call answered, costing `dollars` by its usage: the last attempt's reservation is settled
   * with that, the failed ones' count as spent. Answers what the failed attempts were charged
   * and what the answer cost beyond its reservation.
   */
  settle(dollars: number): { readonly retriedDollars: number; readonly beyond: number } {
    const last = this.#held.length - 1
    let retriedDollars = 0
    for (const reservation of this.#held.slice(0, last)) {
      this.#ledger.settle(reservation, reservation.dollars)
      retriedDollars += reservation.dollars
    }
    const beyond = this.#ledger.settle(this.#held[last] as Reservation, dollars)
    return { retriedDollars, beyond }
  }

  /** The call failed: every reservation counts as spent (a failed call may have been billed). */
  settleFailed(): void {
    for (const reservation of this.#held) this.#ledger.settle(reservation, reservation.dollars)
  }
}
