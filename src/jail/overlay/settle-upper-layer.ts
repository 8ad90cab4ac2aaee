/**
 * @module jail/overlay/settle-upper-layer
 * The one pass over a finished command's upper layer before anything reads it: every later
 * door (the keep door's git rule, the move into a kept layer, the write-back's walk) names
 * entries by UTF-8 paths and so cannot see below a name that is not UTF-8, and the move into a
 * kept layer is a rename that keeps whatever bits an entry has. So here, walking raw names and
 * entering every folder: an entry whose name is not valid UTF-8 is removed with all it holds
 * (it could come back nowhere anyway, and below it a repository's hooks or a setuid binary
 * would pass every door unseen); so is an entry whose path is longer than
 * {@link MAX_PATH_BYTES} (a program's 3,000 nested folders made each later door fail on the
 * host's path limit, after minutes of walking, and no project names such a path); and every
 * file loses its setuid and setgid bits (a kept layer is the host's disk). The layer is
 * unmounted, so nothing of the jail should change it meanwhile; still no link is followed, even
 * if one appears mid-pass (each folder is opened with `O_NOFOLLOW` through its parent's
 * descriptor, and a mode is changed only through a descriptor that holds the entry checked).
 */
import fs from 'node:fs'
import { chmodPinned, usingFolder } from '../pinned-folder.ts'

const FOLDER_FLAGS = fs.constants.O_RDONLY | fs.constants.O_DIRECTORY | fs.constants.O_NOFOLLOW
/**
 * The longest workspace-relative path that stays: half the host's `PATH_MAX`, leaving the other
 * half for the folder the workspace or a layer lies in.
 */
export const MAX_PATH_BYTES = 2048

/** An entry removed from the layer, with why. */
export interface SettledAway {
  /** Workspace-relative; a name that is not UTF-8 in a lossy display form. */
  readonly path: string
  readonly reason: string
}

/**
 * Opens a folder of the layer; one its owner shut (a caller that is not root runs the jail as
 * itself, and `chmod 0` stops even the owner) is opened for the owner first, since every later
 * door must see below it.
 */
function openFolder(folder: Buffer, stat: fs.Stats): number {
  try {
    return fs.openSync(folder, FOLDER_FLAGS)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EACCES') throw error
    chmodPinned(
      folder,
      (now) => now.isDirectory() && now.ino === stat.ino && now.dev === stat.dev,
      (now) => (now.mode & 0o7777) | 0o700,
    )
    return fs.openSync(folder, FOLDER_FLAGS)
  }
}

/**
 * Settles the upper layer `upper` (see the module comment); answers each entry removed, with why.
 *
 * @example
 * refused.push(...settleUpperLayer(upper))
 */
export function settleUpperLayer(upper: string): SettledAway[] {
  const removed: SettledAway[] = []
  const walk = (descriptor: number, relative: string): void => {
    const folder = `/proc/self/fd/${descriptor}`
    for (const raw of fs.readdirSync(folder, { encoding: 'buffer' })) {
      const name = raw.toString('utf8')
      const display = relative === '' ? name : `${relative}/${name}`
      const child = Buffer.concat([Buffer.from(`${folder}/`), raw])
      const away = !Buffer.from(name, 'utf8').equals(raw)
        ? 'its name is not valid UTF-8, so it cannot be named in the workspace and is not kept in the jail either; rename it'
        : Buffer.byteLength(display) > MAX_PATH_BYTES
          ? `its path is longer than ${MAX_PATH_BYTES} bytes, so it is neither written back nor kept in the jail, and nothing below it; make the tree shallower`
          : undefined
      if (away !== undefined) {
        fs.rmSync(child, { recursive: true, force: true })
        removed.push({ path: display, reason: away })
        continue
      }
      const stat = fs.lstatSync(child)
      if (stat.isFile() && (stat.mode & 0o6000) !== 0)
        chmodPinned(
          child,
          (now) => now.isFile(),
          (now) => now.mode & 0o1777,
        )
      if (!stat.isDirectory()) continue
      usingFolder(openFolder(child, stat), (next) => walk(next, display))
    }
  }
  usingFolder(fs.openSync(upper, FOLDER_FLAGS), (top) => walk(top, ''))
  return removed
}
