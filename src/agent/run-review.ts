/**
 * @module agent/run-review
 * Settling a Run kept for review, by whoever may: the runtime that hired it (after checking it
 * did), or a person at the terminal (`eitri runs merge|discard`), who may settle any Run in the
 * store. `merge` brings the Run's world into its parent's line (into main only with a person's
 * approval); `discard` throws the world away, with every fork below it. A Run settles once.
 */
import { EitriError } from '../errors/eitri-error.ts'
import { MAIN_LINE } from '../ports/line-control.ts'
import type { Store } from '../store/store.ts'
import type { WorkspaceLines } from '../workspace/workspace-lines.ts'
import { durableWrite } from './durable-write.ts'
import { discardWorld, keptReason, settleWorld, type MergeApprover } from './run-settlement.ts'

/** What settling a reviewed Run did: `settled` false when the merge was refused or conflicted. */
export interface ReviewOutcome {
  readonly settled: boolean
  /** `merged-after-review`, `discarded-after-review`, or why the merge did not happen. */
  readonly reason: string
}

/** What {@link settleReviewedRun} takes. */
export interface ReviewSettlement {
  readonly store: Store
  readonly lines: WorkspaceLines
  readonly runId: string
  readonly action: 'merge' | 'discard'
  /** Asks a person before a merge into main; without it, such a merge is refused. */
  readonly approve: MergeApprover | undefined
  /** Stops waiting for the person (the Run stays in review). */
  readonly signal: AbortSignal
  /** Told when the settlement's store write fails and is being retried. */
  readonly onStoreRetry?: ((message: string, error: unknown) => void) | undefined
}

/**
 * Merges or discards the world of a Run in review, and records the settlement.
 *
 * @throws EitriError `not_found` for a Run the store does not hold; `conflict` for one not in
 *   review (still running, or settled already).
 * @example
 * await settleReviewedRun({ store, lines, runId, action: 'discard', approve, signal })
 * // { settled: true, reason: 'discarded-after-review' }
 */
export async function settleReviewedRun(input: ReviewSettlement): Promise<ReviewOutcome> {
  const { store, lines, runId } = input
  const record = await store.getRun(runId)
  if (record === undefined) throw new EitriError('not_found', `No Run ${runId} in the store.`)
  if (record.settlementStatus !== 'review' || record.world === undefined) {
    throw new EitriError(
      'conflict',
      record.settlementStatus === 'open'
        ? `Run ${runId} has not settled yet; it settles itself once it stops.`
        : `Run ${runId} is settled as ${record.settlementStatus} already; a Run settles once.`,
    )
  }
  const world = lines.find(record.world)
  if (world === MAIN_LINE)
    throw new EitriError('state_corrupt', `Run ${runId} names main as its world.`)
  const write = (status: 'merged' | 'discarded', reason: string) =>
    durableWrite((call) => store.settleRun(runId, { status, reason }, call), {
      log: input.onStoreRetry,
    })
  if (input.action === 'discard') {
    const kept = await discardWorld(lines, world.id)
    const reason =
      kept.length === 0 ? 'discarded-after-review' : keptReason('discarded-after-review', kept)
    await write('discarded', reason)
    return { settled: true, reason }
  }
  const step = await settleWorld({
    lines,
    runId,
    agentId: record.agentId ?? '',
    world: world.id,
    status: 'completed',
    policy: 'automatic',
    approve: input.approve,
    signal: input.signal,
  })
  if (step.status !== 'merged') return { settled: false, reason: step.reason }
  await write('merged', 'merged-after-review')
  return { settled: true, reason: 'merged-after-review' }
}
