/**
 * @module agent/live-run
 * One admitted Run as the runtime that owns it holds it while it lives: how to cancel it, the
 * children it hired, the causes recorded, and the promise of its settled result.
 */
import type { AgentDef } from './agent-def.ts'
import type { Authority } from './delegation-ceiling.ts'
import type { HireRequest } from './hire-request.ts'
import type { BudgetLedger } from './llm/model-budget.ts'
import type { RunResult } from './run-result.ts'

/** A Run between its admission and its settlement. */
export class LiveRun {
  readonly id: string
  readonly def: AgentDef
  /** The world's name (the Run's `world`); the fork's id is {@link worldId} once forked. */
  readonly world: string
  readonly parent: LiveRun | undefined
  readonly authority: Authority
  readonly request: HireRequest
  /** What its children's budgets come out of (its program's ledger, or what its own came from). */
  readonly budget: BudgetLedger | undefined
  /** Aborts when the Run is cancelled. */
  readonly controller = new AbortController()
  /** Every child it hired, running or not. */
  readonly children = new Set<LiveRun>()
  /** The Runs whose results it consumed. */
  readonly causedBy: string[]
  /** Resolves once the Run has stopped and settled; never rejects unhandled. */
  readonly done: Promise<RunResult>
  worldId: string | undefined
  /** Set once cancelling began: it hires no more children. */
  cancelling = false
  /** Set once its program returned: it hires no more children. */
  programEnded = false
  readonly #resolve: (result: RunResult) => void
  readonly #reject: (error: unknown) => void

  constructor(fields: {
    id: string
    def: AgentDef
    world: string
    parent: LiveRun | undefined
    authority: Authority
    request: HireRequest
    budget?: BudgetLedger | undefined
  }) {
    this.id = fields.id
    this.def = fields.def
    this.world = fields.world
    this.parent = fields.parent
    this.authority = fields.authority
    this.request = fields.request
    this.budget = fields.budget
    this.causedBy = fields.parent === undefined ? [] : [fields.parent.id]
    const { promise, resolve, reject } = Promise.withResolvers<RunResult>()
    this.done = promise
    // Waiting on it is optional: a failure nobody awaits must not crash the process.
    promise.catch(() => undefined)
    this.#resolve = resolve
    this.#reject = reject
  }

  /** Ties the Run's end to `execution`. */
  follow(execution: Promise<RunResult>): void {
    execution.then(this.#resolve, this.#reject)
  }

  /** Whether it may hire a child now. */
  get hiring(): boolean {
    return !this.cancelling && !this.programEnded
  }
}
