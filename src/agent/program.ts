/**
 * @module agent/program
 * What a hired agent runs: a program, given its task, its world and a way to hire children,
 * answers an outcome. Every kind (`echo`, `scripted`, and `llm` later) plugs in through this one
 * interface; the runtime owns everything around it (admission, cancellation, settlement).
 */
import type { ModelRun } from '../ports/model-run.ts'
import type { WorkspaceTree } from '../workspace/workspace-tree.ts'
import type { AgentDef } from './agent-def.ts'
import type { Authority } from './delegation-ceiling.ts'
import type { HireOptions, HireRequest } from './hire-request.ts'
import type { BudgetLedger } from './llm/model-budget.ts'
import type { AgentRef, Roster } from './roster.ts'
import type { RunHandle } from './run-handle.ts'
import type { RunTools } from './run-tools.ts'

/** What a Run's program gets. */
export interface ProgramContext {
  /** The Run's id. */
  readonly runId: string
  /** The definition being run. */
  readonly agent: AgentDef
  /** What the Run may do (its access, tools and the program kinds it may hire): a program
   * that calls tools binds them to this, never to the definition alone. */
  readonly authority: Authority
  /** The task it was hired for (plain JSON data). */
  readonly task: unknown
  /** Aborts when the Run is cancelled; a program stops promptly when it does. */
  readonly signal: AbortSignal
  /** The Run's world: the fork it works in (its name, also recorded as the Run's `world`). */
  readonly world: string
  /** The files of the Run's world. */
  tree(): Promise<WorkspaceTree>
  /**
   * Hires a child: this Run is its parent, its world is forked from this Run's world, and it
   * gets no more authority than this Run has. A result consumed through the handle is recorded
   * as a cause of this Run.
   */
  hire(roster: Roster, ref: string | AgentRef, options: HireOptions): Promise<RunHandle>
  /** The tools the Run may call, in its world under its access (none when the host gives none). */
  readonly tools: RunTools
  /**
   * Appends to the Run's journal, durably: retried while the store is unavailable, given up
   * (throwing) only when the Run is cancelled. A program journals an intent before each effect
   * and its result after, so an owner's death between the two is never silently re-run.
   */
  journal(events: readonly { readonly type: string; readonly data?: unknown }[]): Promise<void>
}

/** How a program ended, when it was not cancelled (a cancelled program throws or returns late). */
export type ProgramOutcome =
  | { readonly status: 'completed'; readonly value: unknown; readonly output?: string }
  | {
      readonly status: 'failed'
      readonly error: string
      /** A short stable reason (`repeated-tool-call`); `program-failed` when left out. */
      readonly reason?: string | undefined
    }
  | { readonly status: 'waiting'; readonly reason: string }

/** One Run's program. */
export interface Program {
  run(context: ProgramContext): Promise<ProgramOutcome>
  /** The Run as its tools see it, for a model program (its model and budget). */
  readonly modelRun?: ModelRun | undefined
  /**
   * The ledger this Run's children carve their budgets out of: a model program's own. Without
   * one, they carve out of what this Run's hire was given ({@link ProgramHire.budget}), so a
   * program that spends nothing itself never lets a child spend past the Runs above it. A
   * wrapper of a program passes it on.
   */
  readonly budget?: BudgetLedger | undefined
}

/** The hire a program is made for, before any Run is admitted. */
export interface ProgramHire {
  /** The checked hire: its task and the limits it sets. */
  readonly request: HireRequest
  /** The id of the Run hiring it; undefined for a root Run. */
  readonly parentRun: string | undefined
  /**
   * The dollars this Run's budget comes out of: its parent Run's ledger (the nearest Run above
   * holding one), or the runtime's `budget` (the session's) for a root Run, or for a Run with
   * no ledger above it; undefined: no bound but the Run's own.
   */
  readonly budget?: BudgetLedger | undefined
}

/**
 * Makes the program of a definition (one factory per program kind), at hire time, before the
 * Run is admitted: a factory that throws (an EitriError naming what to fix) refuses the hire,
 * and nothing is written.
 */
export type ProgramFactory = (def: AgentDef, hire: ProgramHire) => Program
