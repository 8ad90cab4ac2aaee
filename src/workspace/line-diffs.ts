/**
 * @module workspace/line-diffs
 * What a fork changed: since it was forked (paths, or unified diffs with the head they were
 * read at), against main now, and how much review merging it needs.
 */
import { forkRef, type ForkInfo } from './fork-registry.ts'
import type { ForkTree } from './fork-tree.ts'
import type { WorkspaceHistory } from './history.ts'
import { conflictReports } from './line-merge.ts'
import type { ConflictReport, LineChange } from './line-types.ts'
import { diffTrees, mergeCommits, unifiedDiffs, type TreeChange } from './tree-merge.ts'

/** What comparing a fork needs from the lines. */
export interface DiffContext {
  readonly history: WorkspaceHistory
  serialize<T>(work: () => Promise<T>): Promise<T>
  /** The head commit of a line, committing a fork's writes first; only inside the queue. */
  head(line: string): Promise<string>
  /** The files of a fork. */
  forkTree(info: ForkInfo): Promise<ForkTree>
  /** Main's tree now (what the watcher saw change since the last look); only inside the queue. */
  mainTree(): Promise<string>
}

/** See `WorkspaceLines.forkDifferences`. */
export async function forkDifferences(context: DiffContext, info: ForkInfo): Promise<TreeChange[]> {
  const { history } = context
  return context.serialize(async () => {
    const main = await context.mainTree()
    const tree = await context.forkTree(info)
    const forkTree = tree.clean
      ? await history.treeOf((await history.readRef(forkRef(info.id))) ?? info.forkPoint)
      : await tree.writeTree()
    return main === forkTree ? [] : diffTrees(history.gitDir, main, forkTree)
  })
}

/** See `WorkspaceLines.changes`. */
export async function forkChanges(
  context: DiffContext,
  info: ForkInfo,
): Promise<{ head: string; changes: { path: string; status: TreeChange['status'] }[] }> {
  const head = await context.serialize(() => context.head(info.id))
  if (head === info.forkPoint) return { head, changes: [] }
  const changes = await diffTrees(context.history.gitDir, info.forkPoint, head)
  return { head, changes: changes.map((change) => ({ path: change.path, status: change.status })) }
}

/** See `WorkspaceLines.diffAt`. */
export async function forkDiffAt(
  context: DiffContext,
  info: ForkInfo,
): Promise<{ head: string; changes: LineChange[] }> {
  const { gitDir } = context.history
  const head = await context.serialize(() => context.head(info.id))
  // Still at its fork point: nothing changed, and no git process to start.
  if (head === info.forkPoint) return { head, changes: [] }
  const changes = await diffTrees(gitDir, info.forkPoint, head)
  if (changes.length === 0) return { head, changes: [] }
  const texts = await unifiedDiffs(gitDir, info.forkPoint, head)
  const described = changes.map((change) => {
    const text = texts.get(change.path)
    const binary = text !== undefined && /^Binary files /m.test(text)
    return {
      path: change.path,
      status: change.status,
      binary,
      ...(text === undefined || binary ? {} : { diff: text }),
    }
  })
  return { head, changes: described }
}

/** See `WorkspaceLines.review`. */
export async function forkReview(
  context: DiffContext,
  info: ForkInfo,
): Promise<{
  tier: 'trivial' | 'reviewable' | 'conflict'
  changes: LineChange[]
  conflicts: ConflictReport[]
}> {
  const { changes } = await forkDiffAt(context, info)
  if (changes.length === 0) return { tier: 'trivial', changes, conflicts: [] }
  const result = await context.serialize(async () =>
    mergeCommits(
      context.history.gitDir,
      await context.head(info.parent),
      await context.head(info.id),
    ),
  )
  if (result.type === 'clean') return { tier: 'reviewable', changes, conflicts: [] }
  return {
    tier: 'conflict',
    changes,
    conflicts: await conflictReports(context.history, result.conflicts),
  }
}
