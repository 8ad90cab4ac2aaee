/**
 * @module jail/overlay/private-covers
 * Private paths (eitri's state and configuration inside the workspace) on an overlay: each is
 * covered with an empty read-only placeholder before the command starts (a folder that lists
 * as empty, so tree walkers pass over it; a file nothing may read), outermost first, and
 * nothing below a covered path (it is gone from view already).
 */
import fs from 'node:fs'
import path from 'node:path'
import type { WorkspaceTree } from '../../workspace/workspace-tree.ts'
import { isWithinAny } from '../../util/relative-paths.ts'

/** A private path's cover: where on the overlay, and the closed placeholder bound there. */
export interface Cover {
  readonly target: string
  readonly source: string
}

/** The covers of the private paths the overlay on `mountPoint` would show. */
export async function coverPlan(options: {
  readonly mountPoint: string
  readonly privatePaths: readonly string[]
  /** The folder holding the placeholders `closed-folder` and `closed-file`. */
  readonly placeholders: string
  readonly tree: WorkspaceTree
  /** Below a fork: main's folder, which the overlay shows under the fork's own layer. */
  readonly below: string | undefined
}): Promise<Cover[]> {
  const covers: Cover[] = []
  const covered: string[] = []
  for (const relative of [...options.privatePaths].sort((a, b) => a.length - b.length)) {
    if (isWithinAny(relative, covered)) continue
    covered.push(relative)
    const stat = await statBelow(options.tree, options.below, relative)
    if (stat === undefined) continue
    const source = path.join(
      options.placeholders,
      stat.type === 'directory' ? 'closed-folder' : 'closed-file',
    )
    covers.push({ target: path.join(options.mountPoint, relative), source })
  }
  return covers
}

/** The layer host request that covers one private path. */
export function coverRequest(cover: Cover): string[] {
  return ['bind', cover.source, cover.target, 'ro']
}

/** What the overlay shows at a path before a command: the tree's entry, or main's below a fork. */
async function statBelow(
  tree: WorkspaceTree,
  below: string | undefined,
  relative: string,
): Promise<{ type: string } | undefined> {
  const stat = await tree.stat(relative)
  if (stat !== undefined || below === undefined) return stat
  // A file or link of the fork's above it hides main's entry already (and a mount below a
  // file could not be made).
  for (
    let folder = path.posix.dirname(relative);
    folder !== '.';
    folder = path.posix.dirname(folder)
  ) {
    const kind = await tree.kind(folder)
    if (kind !== undefined && kind !== 'directory') return undefined
  }
  const entry = fs.lstatSync(path.join(below, relative), { throwIfNoEntry: false })
  return entry === undefined ? undefined : { type: entry.isDirectory() ? 'directory' : 'file' }
}
