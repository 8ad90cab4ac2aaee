/**
 * @module agent/run-cancel
 * Stopping Runs: a cancel reaches the children first, then the Run's own signal, and waits
 * for the Run to stop and settle. Cancel requests and lost leases from the lease keeper come
 * in here too.
 */
import { EitriError } from '../errors/eitri-error.ts'
import type { LiveRun } from './live-run.ts'
import type { RunWork } from './run-work.ts'

/** Cancels a Run, its children first, and waits for it to stop and settle. */
export async function cancelRun(
  work: RunWork,
  live: LiveRun,
  options: { readonly journal?: boolean } = {},
): Promise<void> {
  if (!live.cancelling) {
    live.cancelling = true
    if (options.journal !== false) {
      await work.options.store
        .appendRunEvents(live.id, [{ type: 'cancel-requested' }])
        .catch(() => undefined)
    }
    work.watchers.cancelRequested(live.id)
    await Promise.all([...live.children].map((child) => cancelRun(work, child)))
    live.controller.abort(new EitriError('cancelled', `Run ${live.id} was cancelled.`))
  }
  await live.done.catch(() => undefined)
}

/**
 * Listens to the runtime's lease keeper, if any: a cancel request another process left in the
 * store (journaled there already) cancels the Run here; a Run whose lease was lost (swept while
 * this process could not renew) stops, since its work cannot land; its `finishRun` then
 * answers the row the sweep wrote. Returns the way to stop listening.
 */
export function followLeases(work: RunWork): (() => void) | undefined {
  const cancel = (runId: string, whenProgramEnded: boolean): void => {
    const live = work.live.get(runId)
    if (live === undefined || (!whenProgramEnded && live.programEnded)) return
    void cancelRun(work, live, { journal: false })
  }
  return work.options.leases?.listen({
    onCancelRequested: (runId) => cancel(runId, true),
    onLost: (runId) => cancel(runId, false),
  })
}
