/**
 * @module agent/llm/llm-model-run
 * An llm Run as its tools see it (the `ModelRun` port): its model, and its ledger in
 * micro-dollars. The loop records each settled call and the size of the conversation so far,
 * so a breakdown and the estimate of the next call read what the loop really did.
 */
import type {
  BudgetBreakdown,
  BudgetCheck,
  BudgetEstimate,
  BudgetLine,
  ModelRun,
} from '../../ports/model-run.ts'
import type { ModelPrice } from '../../provider/model-catalog.ts'
import type { AgentDef } from '../agent-def.ts'
import { reservationDollars, type BudgetLedger } from './model-budget.ts'

/** Dollars as whole micro-dollars. */
export function microDollars(dollars: number): number {
  return Math.round(dollars * 1_000_000)
}

/** The `ModelRun` of one llm Run. */
export class LlmModelRun implements ModelRun {
  readonly modelPolicy: { readonly provider: string; readonly model: string }
  readonly tools: readonly string[]
  readonly access: AgentDef['access']
  readonly #ledger: BudgetLedger
  readonly #price: ModelPrice
  readonly #ref: string
  readonly #lines: BudgetLine[] = []
  #inputTokens = 0

  constructor(input: {
    readonly def: AgentDef & { readonly modelPolicy: NonNullable<AgentDef['modelPolicy']> }
    readonly ledger: BudgetLedger
    readonly price: ModelPrice
    readonly ref: string
  }) {
    this.modelPolicy = input.def.modelPolicy
    this.tools = input.def.tools
    this.access = input.def.access
    this.#ledger = input.ledger
    this.#price = input.price
    this.#ref = input.ref
  }

  /** A settled model call (dollars), told by the loop. */
  record(line: Omit<BudgetLine, 'cost'> & { readonly dollars: number }): void {
    const { dollars, ...rest } = line
    this.#lines.push({ ...rest, cost: microDollars(dollars) })
  }

  /** The estimated input of the next call: the conversation so far, told by the loop. */
  set inputTokens(tokens: number) {
    this.#inputTokens = tokens
  }

  check(): BudgetCheck {
    const ledger = this.#ledger
    return {
      budget: microDollars(ledger.total),
      spent: microDollars(ledger.spent),
      reserved: microDollars(ledger.reserved),
      carved: microDollars(ledger.carved),
      remaining: microDollars(ledger.remaining),
    }
  }

  breakdown(): BudgetBreakdown {
    const byModel: Record<string, number> = {}
    let own = 0
    for (const line of this.#lines) {
      byModel[line.model] = (byModel[line.model] ?? 0) + line.cost
      own += line.cost
    }
    return {
      lines: [...this.#lines],
      byModel,
      children: Math.max(0, microDollars(this.#ledger.spent) - own),
    }
  }

  estimate(outputTokens: number): BudgetEstimate {
    const cost = microDollars(reservationDollars(this.#price, this.#inputTokens, outputTokens))
    const remaining = microDollars(this.#ledger.remaining)
    return {
      model: this.#ref,
      inputTokens: this.#inputTokens,
      outputTokens,
      cost,
      affordable: cost <= remaining,
      remaining,
    }
  }
}
