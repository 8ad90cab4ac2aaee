/**
 * @module workspace/undone-merge
 * After an undone merge into main, the work it brought goes on in a new open fork of main (see
 * docs/decisions/0048-undo-merge-reopens-the-work.md): the merged fork itself stays merged and
 * read-only, since its tasks and knowledge already belong to main and its jail's layer is gone.
 */
import type { ForkInfo } from './fork-registry.ts'
import type { ObjectStore } from './git/object-store.ts'
import type { JournalEntry } from './merge-journal.ts'
import type { WorkspaceTree } from './workspace-tree.ts'

/** What reopening an undone merge's work needs from the lines. */
export interface ReopenContext {
  readonly store: ObjectStore
  /** Makes the new fork of main (labelled after the merged fork's name, when it had one). */
  fork(options: { label?: string; quotaBytes?: number }): Promise<ForkInfo>
  tree(line: string): Promise<WorkspaceTree>
  /** Commits the fork's writes with `message`. */
  commit(line: string, message: string): Promise<string>
}

/**
 * A new fork of main holding what the undone merge wrote (`entries`, each `after` the merged
 * content), committed; answers the fork. `merged` is the merged fork's record, if it is kept.
 */
export async function reopenUndoneMerge(
  context: ReopenContext,
  entries: readonly JournalEntry[],
  merged: ForkInfo | undefined,
  mergedName: string,
): Promise<ForkInfo> {
  const fork = await context.fork({
    ...(merged?.name === undefined ? {} : { label: merged.name }),
    ...(merged === undefined ? {} : { quotaBytes: merged.quotaBytes }),
  })
  const tree = await context.tree(fork.id)
  // Written over main as it is now, not as it was at the undo: whatever else main took since is
  // the fork's base, so merging the fork again brings back exactly what the merge did.
  for (const entry of entries) {
    const after = entry.after
    if (after === undefined) {
      await tree.remove(entry.path)
      continue
    }
    const content = (await context.store.require(after.oid)).content
    if (after.kind === 'symlink') {
      await tree.remove(entry.path)
      await tree.createSymlink(entry.path, Buffer.from(content).toString('utf8'))
    } else if (after.kind === 'file' || after.kind === 'executable')
      await tree.writeFileAtomic(entry.path, content, {
        mode: after.kind === 'executable' ? 0o755 : 0o644,
      })
    // A gitlink (a submodule's commit) is no file a fork can hold: main shows it through.
  }
  await context.commit(fork.id, `the changes of the undone merge of ${mergedName} into main`)
  return fork
}
