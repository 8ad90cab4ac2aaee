/**
 * @module workspace/fork-overview
 * What a fork's overview says of it (its state, its last activity) and which forks a prune
 * removes: pure rules over fork records, so `eitri forks` and `workspace_list` say the same.
 */
import type { LineState } from '../ports/line-control.ts'
import type { ForkInfo } from './fork-registry.ts'

/** What became of a fork: still open, merged into its parent, or thrown away. */
export type ForkState = LineState

/** A fork as an overview lists it: its record, its state, its changes, its last activity. */
export interface ForkOverview extends ForkInfo {
  readonly state: ForkState
  /** Files it changed since it was forked (for a discarded fork, when it was discarded). */
  readonly changes: number
  /** The newest of its creation, its last write, its last merge and what became of it. */
  readonly lastActivity: string
}

/** An open fork with no changes is pruned once idle this long (a session may be about to use it). */
export const EMPTY_FORK_IDLE_MS = 60 * 60 * 1000

/** A fork's overview from its record, its changes count and the time of its last write. */
export function overviewOf(
  info: ForkInfo,
  changes: number,
  lastWrite: string | undefined,
): ForkOverview {
  const lastActivity = [info.created, info.merged?.at, info.discarded?.at, lastWrite]
    .filter((time): time is string => time !== undefined)
    .reduce((newest, time) => (Date.parse(time) > Date.parse(newest) ? time : newest))
  const state: ForkState =
    info.discarded !== undefined ? 'discarded' : info.merged !== undefined ? 'merged' : 'open'
  return { ...info, state, changes, lastActivity }
}

/**
 * The forks a prune removes, oldest first: merged ones, discarded ones' records, and open ones
 * that changed nothing and were idle for {@link EMPTY_FORK_IDLE_MS}; never one with a fork of
 * its own that stays.
 */
export function forksToPrune(all: readonly ForkOverview[], now: number): ForkOverview[] {
  const removed: ForkOverview[] = []
  for (const fork of [...all].reverse()) {
    const done =
      fork.state !== 'open' ||
      (fork.changes === 0 && now - Date.parse(fork.lastActivity) >= EMPTY_FORK_IDLE_MS)
    const parentOfKept = all.some(
      (child) => child.parent === fork.id && !removed.some((gone) => gone.id === child.id),
    )
    if (done && !parentOfKept) removed.push(fork)
  }
  return removed.reverse()
}
