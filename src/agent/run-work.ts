/**
 * @module agent/run-work
 * What admitting, executing and cancelling a Run share with the runtime that holds it: its
 * options, its live Runs, whether it is closing, and the terminal write that outlasts an
 * unavailable store. One value per runtime, passed to the modules that do each part.
 */
import type { AgentRuntimeOptions } from './agent-runtime-options.ts'
import { durableWrite } from './durable-write.ts'
import type { HireOptions } from './hire-request.ts'
import type { LiveRun } from './live-run.ts'
import type { AgentRef, Roster } from './roster.ts'
import type { RunHandle } from './run-handle.ts'
import type { RunWatchers } from './run-watchers.ts'

/** One runtime's state, as the parts of a Run's life see it. */
export interface RunWork {
  readonly options: AgentRuntimeOptions
  /** The Runs admitted that have not settled yet, by id. */
  readonly live: Map<string, LiveRun>
  /** Every Run admitted: the ones the runtime may settle later. */
  readonly hired: Set<string>
  /** Whether the runtime refuses new hires (it is closing or closed). */
  readonly closed: () => boolean
  /** Aborts at close: a settlement waiting for a person stops waiting. */
  readonly closeSignal: AbortSignal
  /** Who watches the Runs' lifecycle: told each start, cancel request and finish. */
  readonly watchers: RunWatchers
  /** Hires a child of `ambient` (a program's `hire`). */
  readonly hire: (
    roster: Roster,
    ref: string | AgentRef,
    options: HireOptions,
    ambient: LiveRun,
  ) => Promise<RunHandle>
}

/** A terminal store write: retried while the store is unavailable, until it lands. */
export function durable<T>(
  work: RunWork,
  write: (call: { readonly signal?: AbortSignal }) => Promise<T>,
): Promise<T> {
  return durableWrite(write, { log: work.options.onStoreRetry })
}

/** An error's message, for a Run's row. */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}
