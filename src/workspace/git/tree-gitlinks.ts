/**
 * @module workspace/git/tree-gitlinks
 * The gitlinks (entries naming a nested repository's commit) a tree gained over another: only
 * the folders whose tree changed are read, so the check costs what changed.
 */
import { parseTree, type TreeEntry } from './git-objects.ts'
import type { GitPath } from './git-path.ts'
import type { ObjectStore } from './object-store.ts'

/**
 * The paths of the gitlinks in `after` that `before` (a tree without any, or undefined for
 * none) does not have, sorted.
 */
export async function gitlinksAdded(
  store: ObjectStore,
  before: string | undefined,
  after: string,
): Promise<GitPath[]> {
  const found: GitPath[] = []
  await walk(store, before, after, '', found)
  return found.sort()
}

async function walk(
  store: ObjectStore,
  before: string | undefined,
  after: string,
  prefix: string,
  found: GitPath[],
): Promise<void> {
  if (before === after) return
  const entriesOf = async (tree: string): Promise<TreeEntry[]> =>
    parseTree((await store.require(tree)).content, 'latin1')
  const old = new Map<string, TreeEntry>()
  if (before !== undefined) for (const entry of await entriesOf(before)) old.set(entry.name, entry)
  for (const entry of await entriesOf(after)) {
    const previous = old.get(entry.name)
    if (previous?.oid === entry.oid && previous.kind === entry.kind) continue
    const relative = `${prefix}${entry.name}`
    if (entry.kind === 'gitlink') found.push(relative as GitPath)
    else if (entry.kind === 'directory')
      await walk(
        store,
        previous?.kind === 'directory' ? previous.oid : undefined,
        entry.oid,
        `${relative}/`,
        found,
      )
  }
}
