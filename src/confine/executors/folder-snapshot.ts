/**
 * @module confine/executors/folder-snapshot
 * What a folder holds, path → sha256, taken before and after a confined call: the executor
 * finds what was written itself and never trusts the function to say.
 */
import { createHash } from 'node:crypto'
import fs from 'node:fs/promises'
import path from 'node:path'
import { hashFile } from '../hash-files.ts'

/** A folder's entries: `/`-separated relative path → sha256 (hex). */
export type FolderSnapshot = ReadonlyMap<string, string>

/**
 * Hashes every regular file and symbolic link under `root`, recursively. Links are never
 * followed (a link's hash is that of its target's text, so a link out is seen, not read);
 * pipes, sockets and devices are left out; unreadable folders are skipped.
 */
export async function snapshotFolder(
  root: string,
  options: { readonly signal?: AbortSignal | undefined } = {},
): Promise<FolderSnapshot> {
  const snapshot = new Map<string, string>()
  const visit = async (relative: string): Promise<void> => {
    let entries
    try {
      entries = await fs.readdir(path.join(root, relative), { withFileTypes: true })
    } catch {
      return
    }
    entries.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
    for (const entry of entries) {
      options.signal?.throwIfAborted()
      const child = relative === '' ? entry.name : `${relative}/${entry.name}`
      const host = path.join(root, child)
      if (entry.isDirectory()) {
        await visit(child)
      } else if (entry.isSymbolicLink()) {
        const target = await fs.readlink(host).catch(() => undefined)
        if (target !== undefined) snapshot.set(child, linkHash(target))
      } else if (entry.isFile()) {
        const hash = await hashFile(host, { followSymlinks: false, signal: options.signal })
        if (hash !== undefined) snapshot.set(child, hash)
      }
    }
  }
  await visit('')
  return snapshot
}

/** Entries of `after` that are new or changed since `before`. */
export function changedFiles(
  before: FolderSnapshot,
  after: FolderSnapshot,
): Record<string, string> {
  const changed: Record<string, string> = {}
  for (const [relative, hash] of after) {
    if (before.get(relative) !== hash) changed[relative] = hash
  }
  return changed
}

function linkHash(target: string): string {
  return createHash('sha256').update(`symlink:${target}`).digest('hex')
}
