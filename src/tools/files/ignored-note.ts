/**
 * @module tools/files/ignored-note
 * What an empty `glob` or `grep` answer adds when the search skipped ignored folders: a model
 * told only "No files match **\/*.wasm" concludes there is none, when node_modules holds it.
 */
import type { WalkEntry, WorkspaceView } from '../../ports/workspace-view.ts'

/** Most ignored names the note lists. */
const MAX_NAMED = 5

/**
 * The folders and files right inside `base` that the .gitignore files hide from a search, as
 * a note for an empty answer (`''` when there are none). Two shallow walks: cheap at any size.
 */
export async function ignoredNote(
  workspace: WorkspaceView,
  base: string,
  signal: AbortSignal,
): Promise<string> {
  const depth = base === '' || base === '.' ? 0 : base.split('/').length
  const top = (gitignore: boolean) => topEntries(workspace, base, depth, gitignore, signal)
  const shown = new Set(await top(true))
  const ignored = (await top(false)).filter((path) => !shown.has(path)).sort()
  if (ignored.length === 0) return ''
  const named = ignored.slice(0, MAX_NAMED).join(', ') + (ignored.length > MAX_NAMED ? ', …' : '')
  return ` (not searched, as a .gitignore ignores them: ${named}; give one as path to search it)`
}

async function topEntries(
  workspace: WorkspaceView,
  base: string,
  depth: number,
  gitignore: boolean,
  signal: AbortSignal,
): Promise<string[]> {
  const deeper = (entry: WalkEntry) => entry.path.split('/').length > depth + 1
  const found: string[] = []
  for await (const entry of workspace.walk(base, { signal, gitignore, prune: deeper }))
    found.push(entry.path)
  return found
}
