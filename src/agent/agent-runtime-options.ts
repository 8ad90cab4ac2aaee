/**
 * @module agent/agent-runtime-options
 * What an agent runtime is opened with: the store its Runs are durable in, the lines their
 * worlds fork from, who hires, the ceiling, and the hooks a host listens on.
 */
import type { Store } from '../store/store.ts'
import type { Principal, WorkspaceLines } from '../workspace/workspace-lines.ts'
import type { Authority } from './delegation-ceiling.ts'
import type { BudgetLedger } from './llm/model-budget.ts'
import type { ProgramFactory } from './program.ts'
import type { RunLeases } from './run-lease.ts'
import type { MergeApprover } from './run-settlement.ts'
import type { RunToolsFactory } from './run-tools.ts'

/** The version of the program interpreter recorded with each Run. */
export const INTERPRETER_VERSION = 1

/** What a runtime is opened with. */
export interface AgentRuntimeOptions {
  readonly store: Store
  readonly lines: WorkspaceLines
  /** The caller's line: a root Run's world is forked from it. */
  readonly line: string | (() => string)
  /** Who hires: a root Run's world is forked by it (and owned by the Run). */
  readonly principal: Principal
  /** Asks a person before a Run's world is merged into main; without it, such Runs go to review. */
  readonly approveMerge?: MergeApprover | undefined
  /**
   * The caller's own authority, the ceiling of root Runs, or how to read it at each hire (a
   * session's access can narrow); undefined: only each definition's.
   */
  readonly ceiling?: Authority | (() => Authority) | undefined
  /** @default 4 */
  readonly maxDepth?: number | undefined
  /**
   * The most Runs this runtime holds at once, running or starting, children at any depth
   * included: a Run's own hires count too, so a program cannot fan out past it. @default no limit
   */
  readonly maxActive?: number | undefined
  /** The program of each kind. @default echo and scripted */
  readonly programs?: Readonly<Record<string, ProgramFactory>> | undefined
  /**
   * The dollars this runtime's root Runs carve their budgets out of, as a child's comes out of
   * its parent's (a session's `runs.sessionBudgetDollars`). @default no bound but each Run's own
   */
  readonly budget?: BudgetLedger | undefined
  /**
   * Makes each Run's tools as its program starts (closed when the program ends); without it,
   * programs get no tools.
   */
  readonly runTools?: RunToolsFactory | undefined
  /** Who the Runs act for, as their rows record it. */
  readonly actor?: string | undefined
  /**
   * This process's keeper of Run leases: each Run is admitted holding a lease, released once its
   * terminal row is written; a cancel request another process leaves in the store cancels the
   * Run here, and a Run whose lease was lost stops. Without it, Runs hold no lease (a sweep
   * ends them as interrupted once they have not changed for a while).
   */
  readonly leases?: RunLeases | undefined
  /** Told when a terminal store write fails and is being retried (the Run waits meanwhile). */
  readonly onStoreRetry?: ((message: string, error: unknown) => void) | undefined
  /** Called once a Run's row is durable and its cancel hook registered (a lease starts here). */
  readonly onAdmitted?: ((runId: string) => void) | undefined
  /** Called once a Run has stopped and settled, or failed to (a lease ends here). */
  readonly onEnded?: ((runId: string) => void) | undefined
}
