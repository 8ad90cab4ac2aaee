/**
 * @module ports/model-run
 * The model Run a tool call runs in, as its tools see it: which model it runs (so a tool can
 * hire a worker like it) and its dollar budget, in micro-dollars (1 USD = 1,000,000 μ$, whole
 * numbers). A model program provides it to its own Run's tools; a call outside a model Run has
 * none. Plain data out, so the port knows nothing of the program behind it.
 */
import type { AccessLevel } from './access-context.ts'

/** The Run's budget now, in μ$: `remaining` is what is neither spent, reserved nor carved. */
export interface BudgetCheck {
  readonly budget: number
  /** Settled model calls, and what ended children spent. */
  readonly spent: number
  /** Held for a model call in flight. */
  readonly reserved: number
  /** Carved out for children still running. */
  readonly carved: number
  readonly remaining: number
}

/** One settled model call of the Run. */
export interface BudgetLine {
  readonly step: number
  /** `model-call`, or `compaction` for a summary. */
  readonly kind: 'model-call' | 'compaction'
  /** `provider:model`. */
  readonly model: string
  readonly inputTokens: number
  readonly outputTokens: number
  readonly cost: number
}

/** Where the Run's money went, in μ$. */
export interface BudgetBreakdown {
  readonly lines: readonly BudgetLine[]
  /** Totals per `provider:model`. */
  readonly byModel: Readonly<Record<string, number>>
  /** What ended children spent (carved out of this budget). */
  readonly children: number
}

/** What the next model call may cost, in μ$, at the Run's model's prices. */
export interface BudgetEstimate {
  readonly model: string
  /** The conversation so far, estimated cautiously. */
  readonly inputTokens: number
  readonly outputTokens: number
  readonly cost: number
  /** Whether `remaining` covers it. */
  readonly affordable: boolean
  readonly remaining: number
}

/** The model Run a call runs in. */
export interface ModelRun {
  /** The model it runs. */
  readonly modelPolicy: { readonly provider: string; readonly model: string }
  /** Its definition's tools and access: what a worker like it is given. */
  readonly tools: readonly string[]
  readonly access: AccessLevel
  check(): BudgetCheck
  breakdown(): BudgetBreakdown
  estimate(outputTokens: number): BudgetEstimate
}
