/**
 * @module ports/run-lifecycle
 * What a watcher of Runs is told: first a snapshot of the Runs active at that instant, then each
 * Run that starts, is asked to cancel, or finishes. Plain data, so the port knows nothing of
 * the agent layer that emits it.
 */

/** One active Run, as a snapshot lists it. */
export interface ActiveRun {
  readonly runId: string
  readonly agentId: string
  /** The Run that hired it, for a child. */
  readonly parentId: string | undefined
  /** `cancelling` once a cancel was asked for and before its terminal row is written. */
  readonly state: 'running' | 'cancelling'
}

/**
 * One lifecycle event. `runs/snapshot` comes first, once, and lists every Run admitted whose
 * terminal row is not written yet; each of them, and each Run started later, then gets its own
 * `run/finished`. `run/finished` is sent only once the terminal row is durable in the store;
 * the settlement of the Run's world comes after it.
 */
export type RunLifecycleEvent =
  | { readonly type: 'runs/snapshot'; readonly runs: readonly ActiveRun[] }
  | {
      readonly type: 'run/started'
      readonly runId: string
      readonly agentId: string
      readonly parentId: string | undefined
    }
  | { readonly type: 'run/cancel-requested'; readonly runId: string }
  | {
      readonly type: 'run/finished'
      readonly runId: string
      /** `completed`, `failed`, `cancelled` or `waiting`, as the row says. */
      readonly status: string
      readonly reason: string | undefined
    }

/** Told each lifecycle event, in order, synchronously; what it throws is ignored. */
export type RunLifecycleListener = (event: RunLifecycleEvent) => void
