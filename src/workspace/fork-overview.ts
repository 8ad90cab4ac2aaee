/**
 * @module workspace/fork-overview
 * What a fork's overview says of it (its state, its last activity) and which forks a prune
 * removes: pure rules over fork records, so `eitri forks` and `workspace_list` say the same;
 * and the overview and the prune themselves, over the lines of a workspace.
 */
import fs from 'node:fs'
import path from 'node:path'
import type { LineState } from '../ports/line-control.ts'
import { PERSON_PRINCIPAL, visibleForks, type Principal } from './fork-owner.ts'
import { forgetFork, forkRef, readForks, type ForkInfo } from './fork-registry.ts'
import { timeOfCommit } from './git/git-objects.ts'
import type { WorkspaceHistory } from './history.ts'
import type { LineHooks } from './line-types.ts'
import { diffTrees } from './tree-merge.ts'

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
export function forksToPrune(
  all: readonly ForkOverview[],
  now: number,
  /** Whether a live process uses the fork now (holds its jail's layer): it stays. */
  inUse: (id: string) => boolean = () => false,
): ForkOverview[] {
  const removed: ForkOverview[] = []
  for (const fork of [...all].reverse()) {
    const done =
      (fork.state !== 'open' ||
        (fork.changes === 0 && now - Date.parse(fork.lastActivity) >= EMPTY_FORK_IDLE_MS)) &&
      !inUse(fork.id)
    const parentOfKept = all.some(
      (child) => child.parent === fork.id && !removed.some((gone) => gone.id === child.id),
    )
    if (done && !parentOfKept) removed.push(fork)
  }
  return removed.reverse()
}

/** What an overview and a prune need from the lines of a workspace. */
export interface ForkOverviewContext {
  readonly stateDir: string
  readonly history: WorkspaceHistory
  readonly hooks: LineHooks
  /** Runs `work` in the lines' queue, after what is queued before it. */
  serialize<T>(work: () => Promise<T>): Promise<T>
  /** The head commit of a line, committing a fork's writes first; only inside the queue. */
  head(line: string): Promise<string>
  /** Forgets the files of a fork that is gone. */
  forgetTree(id: string): void
  /** Whether a live process holds something in a fork's folder (`LinesOptions.forkHeld`). */
  forkHeld(id: string): boolean
}

/**
 * Every fork `principal` may see, discarded ones included, oldest first, each with its state,
 * how many files it changed and when it was last active. Open forks' writes are committed.
 */
export async function forkOverviews(
  context: ForkOverviewContext,
  principal: Principal = PERSON_PRINCIPAL,
): Promise<ForkOverview[]> {
  const forks = visibleForks(readForks(context.stateDir, { discarded: true }), principal)
  return context.serialize(async () => {
    const overviews: ForkOverview[] = []
    for (const info of forks) {
      if (info.discarded !== undefined) {
        overviews.push(overviewOf(info, info.discarded.changes ?? 0, undefined))
        continue
      }
      const head = await context.head(info.id)
      const lastWrite =
        head === info.forkPoint
          ? undefined
          : timeOfCommit((await context.history.store.require(head)).content)?.toISOString()
      overviews.push(overviewOf(info, await changeCount(context, info), lastWrite))
    }
    return overviews
  })
}

/**
 * Removes the forks that are done with: merged ones, discarded ones' records, and open ones
 * that changed nothing and were idle for {@link EMPTY_FORK_IDLE_MS}. A fork with open or
 * merged forks of its own stays. Answers the forks removed.
 */
export async function pruneForks(
  context: ForkOverviewContext,
  now: number = Date.now(),
): Promise<ForkOverview[]> {
  // A fork whose jail's layer a live process holds is in use: removing its folder would pull
  // the layer from under that process's mounts. It goes at a later prune.
  const inUse = (id: string): boolean => context.forkHeld(id)
  const candidates = forksToPrune(await forkOverviews(context), now, inUse)
  const removed: ForkOverview[] = []
  const stayed = new Set<string>()
  // Newest first: a fork goes before the fork it came from.
  for (const fork of [...candidates].reverse()) {
    const gone = await context.serialize(async () => {
      // Claimed since it was listed, or a fork of its stayed: it stays too, this time.
      if (
        inUse(fork.id) ||
        candidates.some((child) => child.parent === fork.id && stayed.has(child.id))
      )
        return false
      if (fork.state !== 'discarded') await context.history.deleteRef(forkRef(fork.id))
      context.forgetTree(fork.id)
      fs.rmSync(path.join(context.stateDir, 'forks', fork.id), { recursive: true, force: true })
      forgetFork(context.stateDir, fork.id)
      if (fork.state === 'open') await context.hooks.discarded?.(fork.id)
      return true
    })
    if (gone) removed.unshift(fork)
    else stayed.add(fork.id)
  }
  return removed
}

/** How many files a fork changed since it was forked; run inside the queue. */
export async function changeCount(
  context: Pick<ForkOverviewContext, 'history' | 'head'>,
  info: ForkInfo,
): Promise<number> {
  const head = await context.head(info.id)
  // Still at its fork point: nothing to compare, and no git process to start.
  if (head === info.forkPoint) return 0
  return (await diffTrees(context.history.gitDir, info.forkPoint, head)).length
}
