/**
 * @module jail/overlay/upper-layer
 * What a command changed, read from the upper layer of its overlay: exactly the entries it
 * wrote (copied up or made), whiteouts for what it deleted, and opaque folders for a folder it
 * deleted and made again. So the cost is what changed, never what exists. The host reads the
 * layer through pinned folders (no link in it is followed), and lists the workspace only below
 * what was deleted.
 */
import fs from 'node:fs'
import path from 'node:path'
import type { ProposedChange } from '../../access/write-back/plan-write-back.ts'
import type { WorkspaceTree } from '../../workspace/workspace-tree.ts'
import { walkPinned } from '../pinned-folder.ts'
import { settleUpperLayer } from './settle-upper-layer.ts'

/** The changes of one command and what cannot come back as a change at all. */
export interface UpperLayerChanges {
  readonly changes: ProposedChange[]
  /** Paths that are not changes the write-back can judge, with why. */
  readonly refused: { path: string; reason: string }[]
  /** The folders set apart (see {@link UpperLayerContext.apart}) that the command changed. */
  readonly apart: string[]
}

/** What reading an upper layer needs. */
export interface UpperLayerContext {
  /** The upper layer's folder. */
  readonly upper: string
  /** The workspace the layer lay over. */
  readonly tree: WorkspaceTree
  /** Paths the jail never showed (eitri's state): nothing below them is a change. */
  readonly isPrivate: (relative: string) => boolean
  /** Which of these upper folders the overlay marked opaque (made anew over a deleted one). */
  readonly opaque: (relatives: readonly string[]) => Promise<boolean[]>
  /**
   * When the command started, in the clock of file change times: a workspace entry changed
   * after it changed while the command ran, and the workspace's version wins.
   */
  readonly startedMs: number
  /**
   * Whether a path is set apart: not a change of the tree, but kept in the jail (a fork's
   * `.git`, its ignored files). Asked parents first; what lies below a path set apart goes
   * with it.
   */
  readonly apart?: (relative: string, stat: fs.Stats) => Promise<boolean>
}

/** A whiteout: the overlay's mark of a deleted entry, a character device numbered 0, 0. */
function isWhiteout(stat: fs.Stats): boolean {
  return stat.isCharacterDevice() && stat.rdev === 0
}

/** Whether a folder above `relative` is in `folders`. */
function within(relative: string, folders: ReadonlySet<string>): boolean {
  for (let at = relative.lastIndexOf('/'); at > 0; at = relative.lastIndexOf('/', at - 1)) {
    if (folders.has(relative.slice(0, at))) return true
  }
  return false
}

/** Reads the changes a command left in its upper layer. */
export async function readUpperLayer(context: UpperLayerContext): Promise<UpperLayerChanges> {
  const { tree } = context
  const root = tree.root
  const refused: UpperLayerChanges['refused'] = []
  const entries: { relative: string; stat: fs.Stats; target: string }[] = []
  // First, and for every entry: what no later door could see or name, or would keep as it is.
  refused.push(...settleUpperLayer(context.upper))
  walkPinned(context.upper, new Set(), (entry) => entries.push(entry))
  const apart = new Set<string>()
  const kept: typeof entries = []
  for (const entry of entries) {
    if (context.isPrivate(entry.relative)) continue
    if (context.apart !== undefined) {
      if (within(entry.relative, apart)) continue
      if (await context.apart(entry.relative, entry.stat)) {
        apart.add(entry.relative)
        continue
      }
    }
    kept.push(entry)
  }
  const folders = kept.filter(({ stat }) => stat.isDirectory()).map(({ relative }) => relative)
  const opaqueFlags = await context.opaque(folders)
  const opaque = new Set(folders.filter((_, index) => opaqueFlags[index] === true))
  const inUpper = new Set(kept.map(({ relative }) => relative))

  const deletes: ProposedChange[] = []
  const writes: ProposedChange[] = []
  const deleteHost = async (relative: string): Promise<void> => {
    // Children first: a folder is removed after what it held.
    const stat = await tree.stat(relative)
    if (stat === undefined) return
    if (stat.type === 'directory') {
      for (const entry of await tree.list(relative)) {
        const child = `${relative}/${entry.name}`
        if (!context.isPrivate(child)) await deleteHost(child)
      }
    }
    deletes.push({ path: relative, type: 'delete' })
  }
  const changedMeanwhile = async (relative: string): Promise<boolean> => {
    if (root === undefined) {
      // A tree without a folder (a fork's) stamps each write.
      const stat = await tree.stat(relative)
      return stat !== undefined && stat.modifiedMs > context.startedMs
    }
    const stat = fs.lstatSync(path.join(root, relative), { throwIfNoEntry: false })
    return stat !== undefined && stat.ctimeMs > context.startedMs
  }

  for (const { relative, stat, target } of kept) {
    if (isWhiteout(stat)) {
      if (await changedMeanwhile(relative)) {
        refused.push({
          path: relative,
          reason:
            'it changed in the workspace while the command ran, which deleted it; the workspace’s version was kept',
        })
      } else await deleteHost(relative)
      continue
    }
    const host = await tree.stat(relative)
    if (stat.isDirectory()) {
      if (host !== undefined && host.type !== 'directory') await deleteHost(relative)
      if (host?.type === 'directory' && opaque.has(relative)) {
        // Made anew over a deleted folder: what the workspace holds there and the layer does
        // not was deleted.
        for (const entry of await tree.list(relative)) {
          const child = `${relative}/${entry.name}`
          if (!inUpper.has(child) && !context.isPrivate(child)) await deleteHost(child)
        }
      }
      if (host?.type !== 'directory') writes.push({ path: relative, type: 'directory' })
      continue
    }
    if (!stat.isFile() && !stat.isSymbolicLink()) continue // sockets, pipes, devices: not files
    if (host !== undefined && (await changedMeanwhile(relative))) {
      refused.push({
        path: relative,
        reason:
          'it changed in the workspace while the command ran; the workspace’s version was kept',
      })
      continue
    }
    if (host !== undefined && host.type === 'directory') await deleteHost(relative)
    if (stat.isSymbolicLink()) {
      if (host?.type === 'symlink' && (await tree.readlink(relative)) === target) continue
      writes.push({ path: relative, type: 'symlink', target })
      continue
    }
    // Copied up but not changed (opened for writing, touched, chmod to the same bits): the
    // overlay keeps the workspace's time on a copy, so the same size, bits and time mean the
    // same file.
    if (
      host?.type === 'file' &&
      host.size === stat.size &&
      (host.mode & 0o777) === (stat.mode & 0o777) &&
      // Within a millisecond: a fork's layer stamps its files with the fork's times.
      Math.abs(host.modifiedMs - stat.mtimeMs) < 1
    )
      continue
    writes.push({ path: relative, type: 'file', mode: stat.mode & 0o7777, size: stat.size })
  }
  const seen = new Set<string>()
  const unique = deletes.filter(({ path: relative }) => !seen.has(relative) && seen.add(relative))
  return { changes: [...unique, ...writes], refused, apart: [...apart] }
}
