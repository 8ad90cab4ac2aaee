/**
 * @module ports/agent-runs
 * What tools may do with agents: hire one as a Run, wait for Runs, compose them (join, race),
 * cancel and settle them. A caller acts only on the Runs it hired (and their descendants), in
 * the session and on the line it hired them from; any Run in the store may be waited for and
 * read through the Run log. The workshop implements it with the agent runtime, under the
 * caller's own ceiling (its tools and access). Plain data in and out, so the port knows
 * nothing of the agent layer above it.
 */
import type { RunLogCallOptions, RunView } from './run-log.ts'

/** Which agent to hire: its id (the roster's current version) or an exact version. */
export type AgentChoice = string | { readonly id: string; readonly version: number }

/** A roster as plain data, with where it came from (named in errors). */
export interface RosterSource {
  /** `{"agents": [AgentDef, …]}`, as a roster file holds it. */
  readonly content: unknown
  /** A workspace path, `configuration`, or `js_eval`. */
  readonly source: string
}

/** One hire. */
export interface HireCall {
  readonly agent: AgentChoice
  /** What the agent should do: plain JSON data (a string, usually). */
  readonly task: unknown
  /** The roster to hire from. @default the configuration's `agents` */
  readonly roster?: RosterSource | undefined
  /** `automatic`, `review` or `discard`. @default 'automatic' */
  readonly settlement?: string | undefined
  /** `{maxModelSteps?, budgetDollars?}`, for model programs. */
  readonly limits?: unknown
}

/** A settled Run's result. */
export interface RunOutcome {
  readonly id: string
  /** `completed`, `failed`, `cancelled` or `waiting`. */
  readonly status: string
  readonly value?: unknown
  readonly output?: string | null
  readonly error?: unknown
  readonly reason?: string | null
  /** The Run's world: the fork it worked in. */
  readonly world: string | undefined
  readonly settlementStatus: string
  readonly settlementReason: string | null
}

/** What waiting for a Run found. */
export interface RunWaitOutcome {
  readonly run: RunView
  /** Whether the Run had stopped and settled (its effects merged, kept or discarded). */
  readonly settled: boolean
  /** Whether this caller may cancel or settle it (it hired the Run, or a Run it hired did). */
  readonly yours: boolean
}

/** Options of a wait. */
export interface RunWaitOptions extends RunLogCallOptions {
  /** Give up waiting (not the Run) after this long. */
  readonly waitMs: number
  /** Called about once a second while waiting, with the time waited so far. */
  readonly onWaiting?: ((waitedMs: number) => void) | undefined
}

/**
 * The agents a caller may hire, and its Runs.
 *
 * @example
 * const id = await ctx.agents.hire({ agent: 'echo', task: 'hello' })
 * const outcome = await ctx.agents.result(id)
 */
export interface AgentRuns {
  /**
   * Hires an agent: when it answers, the Run is durable and running.
   * @throws EitriError before anything is written when the hire is refused (naming the field).
   */
  hire(call: HireCall, options?: RunLogCallOptions): Promise<string>
  /**
   * The settled result of a Run this caller hired. `owned`: aborting the signal cancels the
   * Run (the owner's wait); otherwise it only stops waiting.
   */
  result(
    id: string,
    options?: RunLogCallOptions & { readonly owned?: boolean },
  ): Promise<RunOutcome>
  /** Waits at most `waitMs` for any Run in the store to settle, and answers its row either way. */
  wait(id: string, options: RunWaitOptions): Promise<RunWaitOutcome>
  /** Every Run's result, in order, once all have settled. */
  join(ids: readonly string[], options?: RunLogCallOptions): Promise<readonly RunOutcome[]>
  /** The first Run to settle; every other is cancelled, and has stopped, when it answers. */
  race(ids: readonly string[], options?: RunLogCallOptions): Promise<RunOutcome>
  /**
   * Cancels a Run this caller hired (its children first) and waits for it to stop and settle.
   * False when it had ended already.
   */
  cancel(id: string, options?: RunLogCallOptions): Promise<boolean>
  /**
   * Settles a Run of this caller kept for review: `merge` (into main only with a person's yes)
   * or `discard`.
   */
  settle(
    id: string,
    action: 'merge' | 'discard',
    options?: RunLogCallOptions,
  ): Promise<{ readonly settled: boolean; readonly reason: string }>
}
