/**
 * @module access/batch-write
 * Several files written as one change, all or nothing: each path is judged as though the
 * batch's other files were already written (so a repository put together from plain files,
 * `config`, `objects`, `refs` and then `HEAD`, is refused whatever the order), and a write that
 * fails midway puts back what the batch had written.
 */
import type { PathLookup } from './path-policy.ts'
import type { WorkspaceTree } from '../workspace/workspace-tree.ts'

/**
 * The tree as it would be once `written` (resolved paths of regular files) are written: a
 * missing path among them is a file, a missing folder above one is a folder. What exists
 * stays as it is (a write goes into it).
 */
export function lookupAfter(lookup: PathLookup, written: readonly string[]): PathLookup {
  const files = new Set(written)
  const folders = new Set(
    written.flatMap((file) => {
      const components = file.split('/')
      return components.slice(1).map((_, index) => components.slice(0, index + 1).join('/'))
    }),
  )
  return {
    async kind(relativePath) {
      const kind = await lookup.kind(relativePath)
      if (kind !== undefined) return kind
      if (files.has(relativePath)) return 'other'
      return folders.has(relativePath) ? 'directory' : undefined
    },
    readlink: (relativePath) => lookup.readlink(relativePath),
  }
}

/** What was at a path before the batch wrote it. */
interface Before {
  readonly path: string
  /** Its bytes and mode; undefined when it did not exist. */
  readonly file: { readonly bytes: Uint8Array; readonly mode: number } | undefined
  /** Folders the write made, deepest first. */
  readonly madeFolders: readonly string[]
}

/**
 * Runs `write` for each path in order; if one fails, puts back every earlier one (its old
 * content and mode, or removes it and the folders it made) before rethrowing.
 */
export async function writeAllOrNothing<T>(
  tree: WorkspaceTree,
  paths: readonly string[],
  write: (index: number) => Promise<T>,
): Promise<T[]> {
  const done: Before[] = []
  const receipts: T[] = []
  try {
    for (const [index, path] of paths.entries()) {
      done.push(await before(tree, path))
      receipts.push(await write(index))
    }
    return receipts
  } catch (error) {
    for (const earlier of done.reverse()) await putBack(tree, earlier).catch(() => undefined)
    throw error
  }
}

async function before(tree: WorkspaceTree, path: string): Promise<Before> {
  const components = path.split('/')
  const madeFolders: string[] = []
  for (let depth = components.length - 1; depth > 0; depth--) {
    const folder = components.slice(0, depth).join('/')
    if ((await tree.kind(folder)) !== undefined) break
    madeFolders.push(folder)
  }
  const stat = await tree.stat(path)
  const file =
    stat?.type === 'file' ? { bytes: await tree.readFile(path), mode: stat.mode } : undefined
  return { path, file, madeFolders }
}

async function putBack(tree: WorkspaceTree, earlier: Before): Promise<void> {
  if (earlier.file !== undefined) {
    await tree.writeFileAtomic(earlier.path, earlier.file.bytes, {
      mode: earlier.file.mode & 0o777,
    })
    return
  }
  await tree.remove(earlier.path)
  for (const folder of earlier.madeFolders) await tree.remove(folder)
}
