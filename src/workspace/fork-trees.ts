/**
 * @module workspace/fork-trees
 * A fork's tree as its record describes it: its head in the history (its fork point before its
 * first commit), its write log in the fork's state folder, its quota, read-only once merged.
 */
import path from 'node:path'
import { ForkTree } from './fork-tree.ts'
import { displayName, forkRef, type ForkInfo } from './fork-registry.ts'
import type { WorkspaceHistory } from './history.ts'

/** The write log of fork `id`: its writes since its head. */
export function forkWriteLog(stateDir: string, id: string): string {
  return path.join(stateDir, 'forks', id, 'writes.jsonl')
}

/** Opens the tree of the fork `info` describes. */
export async function openForkTree(
  history: WorkspaceHistory,
  stateDir: string,
  info: ForkInfo,
): Promise<ForkTree> {
  const head = (await history.readRef(forkRef(info.id))) ?? info.forkPoint
  const tree = new ForkTree({
    store: history.store,
    baseTree: await history.treeOf(head),
    logFile: forkWriteLog(stateDir, info.id),
    readOnly: info.readOnly,
    quotaBytes: info.quotaBytes,
    baseTime: Date.parse(info.created),
  })
  if (info.merged !== undefined)
    tree.freeze(
      `fork ${displayName(info)} was merged into ${info.merged.into} and is read-only now; fork again to go on.`,
    )
  return tree
}
