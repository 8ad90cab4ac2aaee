/**
 * @module jail/overlay/kept-size
 * How much disk a fork's kept layer takes, and how much moving a command's kept-apart write into
 * it would add: a fork's programs may build (`dist/`, a package under `node_modules`) or commit
 * as much as they like, and the kept layer outlives the command on the host's disk, so its
 * growth is measured before each move and bounded (`jail.maxKeptBytes`).
 *
 * Sizes are allocated bytes (`st_blocks`), what the disk loses: a sparse file counts what it
 * uses, not its length. Both layers are read with `lstat` and `readdir` alone, never through a
 * link; neither changes while it is measured (the command's upper layer is no longer mounted,
 * and only the host writes the kept layer).
 */
import fs from 'node:fs'
import path from 'node:path'

/** The allocated bytes of what lies at `relative` below `root`, folders counted whole; 0 if none. */
export function allocatedBytes(root: string, relative: string): number {
  if (!throughFolders(root, relative)) return 0
  let total = 0
  const pending = [path.join(root, relative)]
  while (pending.length > 0) {
    const at = pending.pop() as string
    const stat = fs.lstatSync(at, { throwIfNoEntry: false })
    if (stat === undefined) continue
    total += stat.blocks * 512
    if (!stat.isDirectory()) continue
    for (const name of fs.readdirSync(at)) pending.push(path.join(at, name))
  }
  return total
}

/**
 * How many bytes the kept layer grows by (negative: shrinks) when the upper layer's `relative`
 * moves in the way kept-layer-merge.ts moves it: a folder on a folder merges entry by entry
 * (unless opaque), anything else replaces what is kept there, and a whiteout over nothing below
 * deletes it.
 */
export function keptGrowth(
  upper: string,
  kept: string,
  relative: string,
  /** Whether something lies below the kept layer at a path (a deletion of it stays marked). */
  below: (relative: string) => boolean,
  /** The upper layer's opaque folders: each replaces the kept one (kept-layer-merge.ts). */
  opaque: ReadonlySet<string>,
): number {
  const stat = throughFolders(upper, relative)
    ? fs.lstatSync(path.join(upper, relative), { throwIfNoEntry: false })
    : undefined
  if (stat === undefined) return 0
  const existing = throughFolders(kept, relative)
    ? fs.lstatSync(path.join(kept, relative), { throwIfNoEntry: false })
    : undefined
  if (stat.isCharacterDevice() && stat.rdev === 0 && !below(relative))
    return -allocatedBytes(kept, relative)
  if (stat.isDirectory() && existing?.isDirectory() === true && !opaque.has(relative)) {
    let growth = 0
    for (const name of fs.readdirSync(path.join(upper, relative)))
      growth += keptGrowth(upper, kept, `${relative}/${name}`, below, opaque)
    return growth
  }
  return allocatedBytes(upper, relative) - allocatedBytes(kept, relative)
}

/**
 * Whether every folder above `relative` below `root` is a folder, not a link: only then does a
 * path through them name what lies there (a link kept where a folder is now wanted is replaced
 * when the move happens, and holds nothing meanwhile).
 */
function throughFolders(root: string, relative: string): boolean {
  const parts = relative.split('/')
  for (let index = 1; index < parts.length; index++) {
    const stat = fs.lstatSync(path.join(root, ...parts.slice(0, index)), { throwIfNoEntry: false })
    if (stat?.isDirectory() !== true) return false
  }
  return true
}
