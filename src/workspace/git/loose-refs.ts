/**
 * @module workspace/git/loose-refs
 * Moving and deleting a reference of eitri's history repository without a git process, by
 * git's own protocol for loose references: take `REF.lock` exclusively, check the reference
 * still names what the caller expects, then rename the lock over the reference (or delete the
 * reference and then the lock). A git command working on the same reference meanwhile finds the
 * lock and waits or fails, exactly as with another git. The lock names its owner, so a lock
 * left by a writer that was killed is taken over, never one a live writer holds
 * (workspace/git/ref-lock). Whatever this cannot do alone (the
 * reference is packed, the repository keeps references in a reftable, keeps reference logs, or
 * the lock is taken, the reference names something else) it leaves to git, answering false:
 * never a half-done move. The caller vouches that the commit exists (eitri just read or wrote
 * it), which git would check.
 */
import fs from 'node:fs'
import fsPromises from 'node:fs/promises'
import path from 'node:path'
import {
  commitRefLock,
  dropRefLock,
  dropRefLockAsync,
  takeRefLock,
  takeRefLockAsync,
  type RefLock,
} from './ref-lock.ts'

const OBJECT_ID = /^[0-9a-f]{40}$/
/** What {@link looseValue} answers for a file that is not a plain object id: never an id. */
const UNREADABLE = 'unreadable'

/**
 * Points `ref` at `commit`, only if it names `expected` now (undefined: only if it does not
 * exist). False when git must do it (see the module), a reference that names something else
 * included: git then refuses it with its own message.
 */
export function moveLooseRef(
  gitDir: string,
  ref: string,
  commit: string,
  expected: string | undefined,
): boolean {
  const move = startMove(gitDir, ref, commit, expected)
  if (move === undefined) return false
  let moved = false
  try {
    // On disk before the rename, as git does by default (core.fsync covers references): a
    // crash must leave the old value or the new one, never an empty reference.
    fs.fdatasyncSync(move.lock.fd)
    moved = finishMove(move)
  } finally {
    if (!moved) dropRefLock(move.lock)
  }
  return moved
}

interface PendingMove {
  readonly lock: RefLock
  readonly file: string
}

/** Takes the lock and writes `commit` in it, unsynced; undefined when git must do it. */
function startMove(
  gitDir: string,
  ref: string,
  commit: string,
  expected: string | undefined,
): PendingMove | undefined {
  if (!OBJECT_ID.test(commit) || !plainRepository(gitDir, ref)) return undefined
  const file = path.join(gitDir, ref)
  fs.mkdirSync(path.dirname(file), { recursive: true })
  const lock = takeRefLock(gitDir, ref)
  if (lock === undefined) return undefined
  const move = { lock, file }
  let written = false
  try {
    const found = looseValue(file)
    if (
      found !== UNREADABLE &&
      found === expected &&
      !(found === undefined && packed(gitDir, ref))
    ) {
      // A lock taken over from an ended writer may hold its value: ours replaces it.
      fs.ftruncateSync(lock.fd)
      fs.writeSync(lock.fd, `${commit}\n`, 0)
      written = true
    }
  } finally {
    if (!written) dropRefLock(lock)
  }
  return written ? move : undefined
}

/** Renames the synced lock over the reference. */
function finishMove(move: PendingMove): boolean {
  commitRefLock(move.lock, move.file)
  return true
}

/** Deletes `ref` (nothing to do if it does not exist); false when git must do it. */
export function deleteLooseRef(gitDir: string, ref: string): boolean {
  if (!plainRepository(gitDir, ref) || packed(gitDir, ref)) return false
  const file = path.join(gitDir, ref)
  if (!fs.existsSync(file)) return !fs.existsSync(`${file}.lock`)
  const lock = takeRefLock(gitDir, ref)
  if (lock === undefined) return false
  try {
    if (looseValue(file) === UNREADABLE) return false
    fs.rmSync(file, { force: true })
    return true
  } finally {
    dropRefLock(lock)
  }
}

/**
 * What {@link deleteLooseRef} does, in the same order, each file operation on the thread pool:
 * a removal waits on the file system's journal while other processes' syncs commit it, and
 * would hold the one thread meanwhile.
 */
export async function deleteLooseRefAsync(gitDir: string, ref: string): Promise<boolean> {
  if (!plainRepository(gitDir, ref) || packed(gitDir, ref)) return false
  const file = path.join(gitDir, ref)
  if (!fs.existsSync(file)) return !fs.existsSync(`${file}.lock`)
  const lock = await takeRefLockAsync(gitDir, ref)
  if (lock === undefined) return false
  try {
    if (looseValue(file) === UNREADABLE) return false
    await fsPromises.rm(file, { force: true })
    return true
  } finally {
    await dropRefLockAsync(lock)
  }
}

/**
 * Whether references of this repository are plain loose files with no log: no reftable, no
 * reference log for `ref` (git writes one when `core.logAllRefUpdates` says so, and that is
 * git's to do), and a name with nothing git would refuse.
 */
function plainRepository(gitDir: string, ref: string): boolean {
  if (!/^refs\/[A-Za-z0-9/_-]+$/.test(ref) || ref.includes('//') || ref.endsWith('/')) return false
  if (fs.existsSync(path.join(gitDir, 'reftable'))) return false
  if (fs.existsSync(path.join(gitDir, 'logs', ref))) return false
  try {
    const config = fs.readFileSync(path.join(gitDir, 'config'), 'utf8')
    return !/logallrefupdates|refstorage/i.test(config)
  } catch {
    return false
  }
}

/**
 * Whether git would surely find no `ref`: no loose file, no lock (a writer midway), no reftable
 * and no `packed-refs` entry. False when unsure: the caller then asks git.
 */
export function looseRefAbsent(gitDir: string, ref: string): boolean {
  if (!/^refs\/[A-Za-z0-9/_-]+$/.test(ref)) return false
  const file = path.join(gitDir, ref)
  if (fs.existsSync(file) || fs.existsSync(`${file}.lock`)) return false
  return !fs.existsSync(path.join(gitDir, 'reftable')) && !packed(gitDir, ref)
}

/** The loose reference's object id, undefined when there is no file, `unreadable` otherwise. */
function looseValue(file: string): string | undefined {
  let text: string
  try {
    text = fs.readFileSync(file, 'utf8')
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ENOENT' ? undefined : UNREADABLE
  }
  const value = text.trim()
  // A symbolic reference, or anything else git wrote that is not an id, is git's to handle.
  return OBJECT_ID.test(value) ? value : UNREADABLE
}

/** Whether `packed-refs` lists `ref`. */
function packed(gitDir: string, ref: string): boolean {
  let text: string
  try {
    text = fs.readFileSync(path.join(gitDir, 'packed-refs'), 'utf8')
  } catch {
    return false
  }
  return text.split('\n').some((line) => line.endsWith(` ${ref}`))
}
