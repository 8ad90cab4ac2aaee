/**
 * @module agent/settlement-decision
 * What happens to a Run's world once the Run and every child it hired have stopped: merged into
 * its parent's line, kept for a person to review, or thrown away. One pure function of the facts
 * known so far: it either settles or names the one fact it needs next (the world's changes, a
 * person's approval, the merge's outcome), so the effectful caller is a loop and every case
 * reads as a row of a table (settlement-decision.test.ts).
 */
import type { ApprovalAnswer } from '../ports/access-context.ts'
import type { RunFinishStatus } from '../store/run-record.ts'

/** Every settlement policy a hire may ask for. */
export const SETTLEMENT_POLICIES = Object.freeze(['automatic', 'review', 'discard'] as const)

/** One of {@link SETTLEMENT_POLICIES}. `automatic` is the default. */
export type SettlementPolicy = (typeof SETTLEMENT_POLICIES)[number]

/** What a merge of the world into its parent line did. */
export type MergeFact =
  | { readonly type: 'merged' }
  | { readonly type: 'nothing' }
  | { readonly type: 'conflict'; readonly paths: readonly string[] }
  | { readonly type: 'refused'; readonly reason: string }
  | { readonly type: 'changed-on-disk'; readonly paths: readonly string[] }
  | { readonly type: 'error'; readonly message: string }

/** The facts known so far. */
export interface SettlementFacts {
  readonly status: RunFinishStatus
  readonly policy: SettlementPolicy
  /** How many files the world changed, once looked at. */
  readonly changes?: number | undefined
  /** Whether the world's parent line is main (the user's live folder), once looked at. */
  readonly intoMain?: boolean | undefined
  /** The answer about a merge into main: approved, refused, or nobody could be asked. */
  readonly approval?: ApprovalAnswer | undefined
  readonly merge?: MergeFact | undefined
}

/** The next step: look something up, ask, merge, or the settlement with what to do with the world. */
export type SettlementStep =
  | { readonly type: 'need-changes' }
  | { readonly type: 'need-approval' }
  | { readonly type: 'merge' }
  | {
      readonly type: 'settle'
      readonly status: 'merged' | 'review' | 'discarded'
      readonly reason: string
      /** `discard`: remove the fork; `keep`: leave it (kept for review, or merged and read-only). */
      readonly world: 'discard' | 'keep'
    }

/**
 * The next step of settling a Run, from the facts known so far.
 *
 * @example
 * decideSettlement({ status: 'completed', policy: 'automatic' }) // { type: 'need-changes' }
 * decideSettlement({ status: 'cancelled', policy: 'automatic' })
 * // { type: 'settle', status: 'discarded', reason: 'cancelled', world: 'discard' }
 */
export function decideSettlement(facts: SettlementFacts): SettlementStep {
  const { status, policy } = facts
  if (status === 'failed' || status === 'cancelled') return settle('discarded', status, 'discard')
  if (status === 'waiting') return settle('review', 'execution-waiting', 'keep')
  if (policy === 'discard') return settle('discarded', 'policy', 'discard')
  if (policy === 'review') return settle('review', 'policy', 'keep')
  if (facts.changes === undefined || facts.intoMain === undefined) return { type: 'need-changes' }
  // Nothing to bring back: nobody needs asking, and the empty fork is of no use to anyone.
  if (facts.changes === 0) return settle('merged', 'no-changes', 'discard')
  if (facts.intoMain && facts.approval === undefined) return { type: 'need-approval' }
  // A person who says no and nobody to ask both keep the fork; the reason says which it was.
  if (facts.approval?.type === 'refused')
    return settle('review', `approval-refused: ${facts.approval.reason}`, 'keep')
  if (facts.approval?.type === 'unavailable')
    return settle('review', `approval-unavailable: ${facts.approval.reason}`, 'keep')
  const merge = facts.merge
  if (merge === undefined) return { type: 'merge' }
  switch (merge.type) {
    case 'merged':
      return settle('merged', 'automatic', 'keep')
    case 'nothing':
      // The parent line already held every change: nothing is lost by removing the fork.
      return settle('merged', 'no-changes', 'discard')
    case 'conflict':
      return settle('review', `merge-conflict: ${merge.paths.join(', ')}`, 'keep')
    case 'refused':
      return settle('review', `merge-refused: ${merge.reason}`, 'keep')
    case 'changed-on-disk':
      return settle('review', `changed-on-disk: ${merge.paths.join(', ')}`, 'keep')
    case 'error':
      return settle('review', `automatic-merge-failed: ${merge.message}`, 'keep')
  }
}

function settle(
  status: 'merged' | 'review' | 'discarded',
  reason: string,
  world: 'discard' | 'keep',
): SettlementStep {
  return { type: 'settle', status, reason, world }
}
