/**
 * @module workshop/main-write-guard
 * Merges into main pass the same judgement as everything that comes back from a jail: the
 * write-back plan over main's view. A fork's tree holds no `.git` and knows nothing of main's
 * repositories (a hooks path named in main's `.git/config`), so only main's policy can judge.
 */
import { treeHistoryHost } from '../access/git-metadata/tree-history-host.ts'
import { linkTargetPath, planWriteBack } from '../access/write-back/plan-write-back.ts'
import { EitriError } from '../errors/eitri-error.ts'
import type { WorkspaceView } from '../ports/workspace-view.ts'
import type { MainWriteGuard } from '../workspace/workspace-lines.ts'
import type { WorkspaceTree } from '../workspace/workspace-tree.ts'

/** The guard of merges and restores into a line, judged by that line's view over its tree. */
export function mainWriteGuard(
  surfaceOf: (line: string) => Promise<{ view: WorkspaceView; tree: WorkspaceTree }>,
): MainWriteGuard {
  return async (line, writes) => {
    const { view, tree } = await surfaceOf(line)
    const plan = await planWriteBack(writes, {
      decide: async (path, change) => {
        try {
          await view.resolve(path, 'write', { followFinal: change.type === 'file' })
          if (change.type === 'symlink')
            await view.resolve(linkTargetPath(path, change.target ?? ''), 'read')
          return undefined
        } catch (error) {
          if (EitriError.isInstance(error)) return error.message
          throw error
        }
      },
      host: treeHistoryHost(tree),
      // A merge never carries a repository's history (forks hold no .git): content that the
      // history rules would need is unknown, so such a change is refused.
      proposal: { read: async () => undefined, sameAsHost: async () => false },
      limits: { maxFileBytes: Number.POSITIVE_INFINITY, maxTotalBytes: Number.POSITIVE_INFINITY },
    })
    return [...plan.refused, ...plan.kept, ...plan.dropped]
  }
}
