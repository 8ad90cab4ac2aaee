/**
 * @module jail/pinned-folder
 * Work below a folder that a jailed program may change at the same moment (a mirror that a
 * background job writes while the host syncs it). A plain path would follow a folder the
 * program just replaced with a link, and the host (root, for a root caller) would write, read
 * or delete outside. Node has no `openat`, so each folder on the way is opened with
 * `O_NOFOLLOW` and the next name is looked up through `/proc/self/fd/N`: no link planted
 * anywhere on the path is ever followed (jail-attack-classes §6).
 */
import fs from 'node:fs'
import path from 'node:path'
import { EitriError } from '../errors/eitri-error.ts'

/**
 * How a program's file is opened: no link followed, and never waiting. A FIFO a program swapped
 * in after the entry was looked at (a background job beside a mirror's sync can) would block
 * an open without `O_NONBLOCK` until some writer came, and with it eitri's one thread and every
 * session it serves. The open's `fstat` then refuses anything but a regular file.
 */
export const READ_FLAGS = fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW | fs.constants.O_NONBLOCK

const FOLDER_FLAGS = fs.constants.O_RDONLY | fs.constants.O_DIRECTORY | fs.constants.O_NOFOLLOW

/** Errors that mean "something on the way is not a folder (any more)". */
const NOT_A_FOLDER = new Set(['ELOOP', 'ENOTDIR', 'ENOENT'])

/** Linux's `O_PATH` (the same on x86_64 and aarch64); Node does not name it. */
const O_PATH = 0o10000000

/**
 * Sets the mode of the entry at `entry` to `mode(stat)`, but only while it is what `wanted` says:
 * the entry is pinned first (`O_PATH | O_NOFOLLOW`, which holds a link itself, never its
 * target), checked, and changed through that descriptor. A command's process that still reaches
 * the layer (a warm jail's supervisor taken over, docs/attacks/warm-supervisor-ptrace.md, fixed
 * since) may swap the entry for a link to a host file between a check by path and a chmod by path, and this
 * pass runs as the caller: by path, the host file got the mode.
 */
export function chmodPinned(
  entry: Buffer,
  wanted: (stat: fs.Stats) => boolean,
  mode: (stat: fs.Stats) => number,
): void {
  const pinned = fs.openSync(entry, O_PATH | fs.constants.O_NOFOLLOW)
  try {
    const stat = fs.fstatSync(pinned)
    // A chmod through /proc/self/fd of an O_PATH descriptor reaches the inode it holds.
    if (wanted(stat)) fs.chmodSync(`/proc/self/fd/${pinned}`, mode(stat))
  } finally {
    fs.closeSync(pinned)
  }
}

/**
 * Runs `work` with a path naming `relative` below `root` whose folders were all opened without
 * following a link; only the last name is looked up by `work` itself, which must not follow
 * it either (`lstat`, `unlink`, `mkdir`, `symlink`, `open` with `O_NOFOLLOW`).
 *
 * @throws EitriError `sandbox_violation` when a folder on the way is a link or not a folder.
 */
export function atPinned<T>(root: string, relative: string, work: (pinned: string) => T): T {
  const parent = path.posix.dirname(relative)
  let descriptor: number
  try {
    descriptor = openFolder(root, parent === '.' ? '' : parent)
  } catch (error) {
    if (!NOT_A_FOLDER.has((error as NodeJS.ErrnoException).code ?? '')) throw error
    throw new EitriError(
      'sandbox_violation',
      `A folder on the way to ${relative} in the jail's copy of the workspace was replaced (by a link?) while the host synced it; nothing was followed. End background jobs with shell_kill and run again.`,
      { cause: error },
    )
  }
  try {
    return work(`/proc/self/fd/${descriptor}/${path.posix.basename(relative)}`)
  } finally {
    fs.closeSync(descriptor)
  }
}

/** The entries of the folder `relative` below `root`; none if it is gone or became a link. */
export function listPinned(root: string, relative: string): fs.Dirent[] {
  let descriptor: number
  try {
    descriptor = openFolder(root, relative)
  } catch (error) {
    if (NOT_A_FOLDER.has((error as NodeJS.ErrnoException).code ?? '')) return []
    throw error
  }
  try {
    return fs.readdirSync(`/proc/self/fd/${descriptor}`, { withFileTypes: true })
  } finally {
    fs.closeSync(descriptor)
  }
}

/** Whether an entry is at `relative` below `root` (a link counts; none is followed). */
export function existsPinned(root: string, relative: string): boolean {
  try {
    return (
      atPinned(root, relative, (pinned) => fs.lstatSync(pinned, { throwIfNoEntry: false })) !==
      undefined
    )
  } catch (error) {
    if (EitriError.isInstance(error)) return false
    throw error
  }
}

/** Removes `relative` below `root` and all a folder holds; links are removed, never followed. */
export function removePinned(root: string, relative: string): void {
  try {
    atPinned(root, relative, removeEntry)
  } catch (error) {
    // Nothing below a link or a missing folder is ours to remove.
    if (!EitriError.isInstance(error)) throw error
  }
}

function removeEntry(pinned: string): void {
  const stat = fs.lstatSync(pinned, { throwIfNoEntry: false })
  if (stat === undefined) return
  if (!stat.isDirectory()) {
    fs.unlinkSync(pinned)
    return
  }
  const descriptor = fs.openSync(pinned, FOLDER_FLAGS)
  try {
    for (const name of fs.readdirSync(`/proc/self/fd/${descriptor}`)) {
      removeEntry(`/proc/self/fd/${descriptor}/${name}`)
    }
  } finally {
    fs.closeSync(descriptor)
  }
  fs.rmdirSync(pinned)
}

/** Opens `root`, then each folder of `relative` in turn, refusing links (ELOOP) on the way. */
function openFolder(root: string, relative: string): number {
  let descriptor = fs.openSync(root, FOLDER_FLAGS)
  for (const name of relative === '' ? [] : relative.split('/')) {
    try {
      if (name === '' || name === '.' || name === '..') {
        throw Object.assign(new Error(`unexpected path component in ${relative}`), {
          code: 'ENOENT',
        })
      }
      const next = fs.openSync(`/proc/self/fd/${descriptor}/${name}`, FOLDER_FLAGS)
      fs.closeSync(descriptor)
      descriptor = next
    } catch (error) {
      fs.closeSync(descriptor)
      throw error
    }
  }
  return descriptor
}

/** An entry met by {@link walkPinned}, with what its signature needs. */
export interface PinnedEntry {
  readonly relative: string
  readonly stat: fs.Stats
  /** The target, for a symbolic link. */
  readonly target: string
}

/**
 * Every entry below `root`, parents before children, each folder opened once (without
 * following a link) and its entries looked at through that open folder: a link planted in the
 * mirror is never followed, and a large tree costs one open per folder, not per file. A name
 * that is not valid UTF-8 cannot be named to the workspace: it goes to `unnamed` (as a lossy
 * display form), and nothing below it is visited.
 */
export function walkPinned(
  root: string,
  skip: ReadonlySet<string>,
  visit: (entry: PinnedEntry) => void,
  unnamed: (display: string) => void = () => undefined,
): void {
  const walkFolder = (descriptor: number, relative: string): void => {
    const folderPath = `/proc/self/fd/${descriptor}`
    let names: Buffer[]
    try {
      names = fs.readdirSync(folderPath, { encoding: 'buffer' })
    } catch {
      return
    }
    for (const raw of names) {
      const name = raw.toString('utf8')
      const childRelative = relative === '' ? name : `${relative}/${name}`
      if (!Buffer.from(name, 'utf8').equals(raw)) {
        unnamed(childRelative)
        continue
      }
      if (skip.has(childRelative)) continue
      const childPath = `${folderPath}/${name}`
      const stat = fs.lstatSync(childPath, { throwIfNoEntry: false })
      if (stat === undefined) continue
      const target = stat.isSymbolicLink() ? fs.readlinkSync(childPath) : ''
      visit({ relative: childRelative, stat, target })
      if (!stat.isDirectory()) continue
      let child: number
      try {
        child = fs.openSync(childPath, FOLDER_FLAGS)
      } catch {
        continue // replaced by something else meanwhile: nothing below it is the mirror's
      }
      usingFolder(child, (opened) => walkFolder(opened, childRelative))
    }
  }
  usingFolder(fs.openSync(root, FOLDER_FLAGS), (top) => walkFolder(top, ''))
}

/** Runs `work` on an open folder's descriptor, which is closed after. */
export function usingFolder<T>(folder: number, work: (folder: number) => T): T {
  try {
    return work(folder)
  } finally {
    fs.closeSync(folder)
  }
}
