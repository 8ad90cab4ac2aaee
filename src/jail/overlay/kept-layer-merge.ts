/**
 * @module jail/overlay/kept-layer-merge
 * What a command left apart in its upper layer (git's files, ignored outputs) moving into its
 * fork's kept layer: merged path by path, whiteouts deleting and opaque folders replacing, with
 * neither layer's links ever followed.
 */
import fs from 'node:fs'
import path from 'node:path'
import { EitriError } from '../../errors/eitri-error.ts'
import { atPinned, listPinned, removePinned } from '../pinned-folder.ts'

/**
 * Whether a kept-apart write is git's index alone (the upper layer is no longer mounted, so
 * nothing can change it while it is looked at; a link is not entered).
 */
export function onlyIndex(upper: string, relative: string): boolean {
  const parts = relative.split('/')
  if (parts.at(-1) !== '.git') return /(^|\/)\.git\/index(\.lock)?$/.test(relative)
  try {
    const folder = path.join(upper, relative)
    if (!fs.lstatSync(folder).isDirectory()) return false
    return fs.readdirSync(folder).every((name) => name === 'index' || name === 'index.lock')
  } catch {
    return false
  }
}

/** The path a kept-apart write is told under: the repository for git's files. */
export function toldAs(relative: string): string {
  const parts = relative.split('/')
  const git = parts.indexOf('.git')
  return git === -1 ? relative : parts.slice(0, git + 1).join('/')
}

/**
 * Moves what a command left at `relative` in its upper layer into the kept layer, merged with
 * what is kept there already (whiteouts delete, an opaque folder replaces). Both layers hold
 * what programs made, links included, so both are reached only through pinned folders: no
 * link in either is ever followed (the host is root for a root caller), and a link kept where
 * a folder is now needed is replaced, never entered (jail-attack-classes §6).
 */
export function keepLayer(
  upper: string,
  kept: string,
  relative: string,
  /** Whether something lies below the kept layer at a path: a deletion of it stays marked. */
  below: (relative: string) => boolean,
  /**
   * The upper layer's folders the overlay marked opaque (made anew over a deleted folder, as
   * `rm -rf dist && mkdir dist` does): each replaces the kept folder there, whose old entries
   * would otherwise come back. Found with {@link mergedFolders}.
   */
  opaque: ReadonlySet<string> = new Set(),
): void {
  const parts = relative.split('/')
  for (let index = 1; index < parts.length; index++) {
    const folder = parts.slice(0, index).join('/')
    const existing = atPinned(kept, folder, (pinned) =>
      fs.lstatSync(pinned, { throwIfNoEntry: false }),
    )
    if (existing?.isDirectory() === true) continue
    if (existing !== undefined) removePinned(kept, folder)
    const mode = atPinned(upper, folder, (pinned) => fs.lstatSync(pinned))
    atPinned(kept, folder, (pinned) => {
      fs.mkdirSync(pinned, { mode: mode.mode & 0o777 })
      fs.lchownSync(pinned, mode.uid, mode.gid)
    })
  }
  mergeInto(upper, kept, relative, below, opaque)
}

/**
 * The upper layer's folders at or below `relative` that meet a kept folder at the same path:
 * those a move would merge entry by entry, unless the overlay marked them opaque (ask the layer
 * host which, then pass them to {@link keepLayer}). No link in either layer is followed.
 */
export function mergedFolders(upper: string, kept: string, relative: string): string[] {
  const isFolder = (root: string, at: string): boolean => {
    try {
      return (
        atPinned(root, at, (pinned) =>
          fs.lstatSync(pinned, { throwIfNoEntry: false }),
        )?.isDirectory() === true
      )
    } catch (error) {
      // A link on the way (kept where a folder is now wanted): nothing there merges.
      if (EitriError.isInstance(error) && error.code === 'sandbox_violation') return false
      throw error
    }
  }
  if (!isFolder(upper, relative) || !isFolder(kept, relative)) return []
  const found = [relative]
  for (const entry of listPinned(upper, relative))
    if (entry.isDirectory()) found.push(...mergedFolders(upper, kept, `${relative}/${entry.name}`))
  return found
}

function mergeInto(
  upper: string,
  kept: string,
  relative: string,
  below: (relative: string) => boolean,
  opaque: ReadonlySet<string>,
): void {
  const stat = atPinned(upper, relative, (pinned) =>
    fs.lstatSync(pinned, { throwIfNoEntry: false }),
  )
  if (stat === undefined) return
  const existing = atPinned(kept, relative, (pinned) =>
    fs.lstatSync(pinned, { throwIfNoEntry: false }),
  )
  if (stat.isCharacterDevice() && stat.rdev === 0 && !below(relative)) {
    removePinned(kept, relative)
    return
  }
  if (stat.isDirectory() && existing?.isDirectory() === true && !opaque.has(relative)) {
    for (const entry of listPinned(upper, relative)) {
      mergeInto(upper, kept, `${relative}/${entry.name}`, below, opaque)
    }
    return
  }
  if (existing !== undefined) removePinned(kept, relative)
  atPinned(upper, relative, (from) => atPinned(kept, relative, (to) => fs.renameSync(from, to)))
}
