/**
 * @module agent/run-settlement
 * Carries out the settlement of one stopped Run: asks `decideSettlement` for the next step and
 * does it (looks at the world's changes, asks a person before main, merges), until it settles;
 * then removes the world when the decision says so.
 */
import { MAIN_LINE } from '../ports/line-control.ts'
import type { AccessContext, ApprovalAnswer } from '../ports/access-context.ts'
import type { RunFinishStatus } from '../store/run-record.ts'
import type { WorkspaceLines } from '../workspace/workspace-lines.ts'
import { displayName, type ForkInfo } from '../workspace/fork-registry.ts'
import { runOfWorld } from '../workspace/fork-owner.ts'
import {
  decideSettlement,
  type MergeFact,
  type SettlementFacts,
  type SettlementPolicy,
} from './settlement-decision.ts'

/** Asks a person to approve a merge into main: approved, refused, or nobody could be asked. */
export type MergeApprover = NonNullable<AccessContext['approve']>

/** A settlement as the store records it. */
export interface SettlementRecord {
  readonly status: 'merged' | 'review' | 'discarded'
  readonly reason: string
}

/** Settles the world (a fork id) of a stopped Run. */
export async function settleWorld(input: {
  readonly lines: WorkspaceLines
  readonly runId: string
  readonly agentId: string
  readonly world: string
  readonly status: RunFinishStatus
  readonly policy: SettlementPolicy
  readonly approve: MergeApprover | undefined
  readonly signal: AbortSignal
}): Promise<SettlementRecord> {
  const { lines, world } = input
  let facts: SettlementFacts = { status: input.status, policy: input.policy }
  let paths: readonly string[] = []
  /** The world's head when its paths were read: a merge into main brings only that (0050). */
  let shownHead: string | undefined
  for (;;) {
    const step = decideSettlement(facts)
    switch (step.type) {
      case 'need-changes': {
        // Only the paths: the patch text is for people reviewing a fork, not for settling it.
        const shown = await lines.changesAt(world)
        const changes = shown.changes
        paths = changes.map((change) => `${change.path} (${change.status})`)
        const found = lines.find(world)
        const intoMain = found !== MAIN_LINE && found.parent === MAIN_LINE
        // While a person is asked, a child of the Run kept for review may be settled into its
        // world (no question: not main): what they approve is the world as listed, nothing more.
        if (intoMain) shownHead = shown.head
        facts = { ...facts, changes: changes.length, intoMain }
        break
      }
      case 'need-approval': {
        facts = { ...facts, approval: await ask(input, paths, shownHead) }
        break
      }
      case 'merge':
        facts = { ...facts, merge: await mergeFact(lines, world, shownHead) }
        break
      case 'settle':
        if (step.world === 'discard') {
          const kept = await discardWorld(lines, world)
          if (kept.length > 0) return { status: step.status, reason: keptReason(step.reason, kept) }
        }
        return { status: step.status, reason: step.reason }
    }
  }
}

async function ask(
  input: Parameters<typeof settleWorld>[0],
  paths: readonly string[],
  head: string | undefined,
): Promise<ApprovalAnswer> {
  if (input.approve === undefined)
    return { type: 'unavailable', reason: 'nobody was named to approve a merge into main' }
  try {
    return await input.approve({
      tool: 'run_settle',
      // The head shown is part of the action: "approve for this session" covers this content,
      // never a later merge of the same Run holding more.
      input: { run: input.runId, fork: input.world, head },
      reason: 'a Run’s automatic settlement merges its changes into main, the user’s live files',
      summary: `merge the world of Run ${input.runId} (agent ${input.agentId}) into main (your live folder): ${paths.length} file${paths.length === 1 ? '' : 's'}: ${paths.slice(0, 20).join(', ')}${paths.length > 20 ? ', …' : ''}`,
      signal: input.signal,
    })
  } catch (error) {
    // An approver that fails has not approved.
    return { type: 'refused', reason: `the approval could not be asked: ${messageOf(error)}` }
  }
}

async function mergeFact(
  lines: WorkspaceLines,
  world: string,
  expectedHead: string | undefined,
): Promise<MergeFact> {
  try {
    const outcome = await lines.merge(world, expectedHead === undefined ? {} : { expectedHead })
    switch (outcome.type) {
      case 'merged':
      case 'nothing':
        return { type: outcome.type }
      case 'conflict':
        return { type: 'conflict', paths: outcome.conflicts.map((conflict) => conflict.path) }
      case 'changed-on-disk':
        return { type: 'changed-on-disk', paths: outcome.paths }
      case 'refused':
        return {
          type: 'refused',
          reason: outcome.refused.map((refused) => `${refused.path}: ${refused.reason}`).join('; '),
        }
    }
  } catch (error) {
    return { type: 'error', message: messageOf(error) }
  }
}

/**
 * Removes a world and every fork below it (the worlds of its children, merged into it or kept
 * for review: without their parent they would hang from nothing), newest first. Only Runs'
 * worlds go: a fork someone made from the world (a session trying something on the Run's
 * work) is theirs, and its work would go with it; then nothing is removed, and the forks that
 * kept the world are answered (decision 0050).
 */
export async function discardWorld(
  lines: WorkspaceLines,
  world: string,
): Promise<readonly ForkInfo[]> {
  // Through the parents, not a listing of every fork: with many Runs open, a listing a
  // settlement would cost a stat per open fork.
  const below = lines.forksBelow(world)
  const others = below.filter((fork) => runOfWorld(fork) === undefined)
  if (others.length > 0) return others
  for (const fork of below) await lines.discard(fork.id)
  return []
}

/** A discard's reason, saying which forks made from the world kept it. */
export function keptReason(reason: string, kept: readonly ForkInfo[]): string {
  return `${reason}; its world is kept for the fork${kept.length === 1 ? '' : 's'} made from it (${kept.map((fork) => displayName(fork)).join(', ')}): discard ${kept.length === 1 ? 'it' : 'them'} first`
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}
