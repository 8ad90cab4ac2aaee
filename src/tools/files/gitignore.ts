/**
 * @module tools/files/gitignore
 * The workspace's root `.gitignore`, which the search tools honour as ripgrep does.
 */
import ignore from 'ignore'
import type { WalkEntry, WorkspaceView } from '../../tool/workspace-view.ts'

/** A prune function for `walk` that drops what the root `.gitignore` ignores. */
export async function gitignorePrune(
  workspace: WorkspaceView,
): Promise<(entry: WalkEntry) => boolean> {
  const rules = ignore()
  const stat = await workspace.stat('.gitignore')
  if (stat?.type === 'file') {
    rules.add(new TextDecoder().decode(await workspace.readFile('.gitignore')))
  }
  return (entry) => rules.ignores(entry.type === 'directory' ? `${entry.path}/` : entry.path)
}
