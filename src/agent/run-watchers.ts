/**
 * @module agent/run-watchers
 * The watchers of one runtime's Runs (`AgentRuntime.watchRuns`): each gets a snapshot of the
 * active Runs, then every start, cancel request and finish, in order. The snapshot is taken
 * and the watcher added in one synchronous step, so no event falls between them or is told
 * twice. The runtime tells `finished` only after the terminal row is durable.
 */
import type { ActiveRun, RunLifecycleEvent, RunLifecycleListener } from '../ports/run-lifecycle.ts'

/** The active Runs of one runtime and who watches them. */
export class RunWatchers {
  readonly #active = new Map<string, ActiveRun>()
  readonly #listeners = new Set<RunLifecycleListener>()

  /**
   * Tells `listener` the snapshot now, then every event until the returned function is called.
   *
   * @example
   * const unwatch = watchers.watch((event) => console.log(event.type)) // runs/snapshot
   */
  watch(listener: RunLifecycleListener): () => void {
    tell(listener, { type: 'runs/snapshot', runs: [...this.#active.values()] })
    this.#listeners.add(listener)
    return () => {
      this.#listeners.delete(listener)
    }
  }

  /** A Run was admitted: its row is durable and `running`. */
  started(run: { runId: string; agentId: string; parentId: string | undefined }): void {
    this.#active.set(run.runId, { ...run, state: 'running' })
    this.#emit({ type: 'run/started', ...run })
  }

  /** A cancel was asked for a Run (once per Run). */
  cancelRequested(runId: string): void {
    const active = this.#active.get(runId)
    if (active === undefined || active.state === 'cancelling') return
    this.#active.set(runId, { ...active, state: 'cancelling' })
    this.#emit({ type: 'run/cancel-requested', runId })
  }

  /** A Run's terminal row is durable. */
  finished(runId: string, status: string, reason: string | undefined): void {
    if (!this.#active.delete(runId)) return
    this.#emit({ type: 'run/finished', runId, status, reason })
  }

  #emit(event: RunLifecycleEvent): void {
    for (const listener of [...this.#listeners]) tell(listener, event)
  }
}

/** A watcher's failure is its own: it must not stop a Run or the other watchers. */
function tell(listener: RunLifecycleListener, event: RunLifecycleEvent): void {
  try {
    listener(event)
  } catch {
    // Ignored on purpose (see above).
  }
}
