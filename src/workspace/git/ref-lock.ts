/**
 * @module workspace/git/ref-lock
 * eitri's locks on references of its history repository, which say whose they are. git's lock
 * is a file `REF.lock` made exclusively, and a writer killed while holding one leaves it behind
 * for ever (git has no owner to ask). eitri makes its lock file first as an owner record in
 * `eitri-ref-locks/` (named by the reference and the owning process), then hard-links it to
 * `REF.lock`: the lock is taken by the link, atomically and with its owner already named. A
 * lock whose record names a process that has ended is stale: the next writer takes it over by
 * renaming that record to its own name (one rename succeeds, so one writer), and finishes or
 * drops it as its own. A lock with no record (git's, a person's) or whose owner may be alive
 * (running, or in a process namespace or on a machine this one cannot see) is never touched.
 * See docs/decisions/0022-stale-ref-locks.md.
 */
import { randomBytes } from 'node:crypto'
import fs from 'node:fs'
import fsPromises from 'node:fs/promises'
import path from 'node:path'
import { promisify } from 'node:util'
import { ownerTag, processEnded, processStartTime } from '../../util/owned-folders.ts'

/** A reference lock this process holds: `fd` is open on it, for writing the new value. */
export interface RefLock {
  readonly fd: number
  readonly lockFile: string
  /** Its owner record (another name of the same file); undefined where links are not made. */
  readonly record: string | undefined
  /** True when it was taken over from an owner that surely ended (killed while holding it). */
  readonly takenOver?: boolean
}

/** `fs.open` on the thread pool, giving a plain descriptor (no FileHandle to close twice). */
const openFile = promisify(fs.open)

/** The folder of owner records, in the repository (links need the same file system). */
const recordsOf = (gitDir: string) => path.join(gitDir, 'eitri-ref-locks')

/** `refs/eitri/main` → `refs.eitri.main` (a reference here never holds a dot). */
const keyOf = (ref: string) => ref.replaceAll('/', '.')

let ownName: string | undefined

/** This process as a record names it: machine boot, process namespace, pid and start time. */
function owner(): string | undefined {
  if (ownName !== undefined) return ownName
  const place = hostPlace()
  if (place !== undefined && processStartTime('self') !== undefined)
    ownName = `${place}-${ownerTag().replace('.', '-')}`
  return ownName
}

let ownPlace: string | null | undefined

/** This machine's boot and this process namespace; undefined when /proc does not say. */
function hostPlace(): string | undefined {
  ownPlace ??= readPlace() ?? null
  return ownPlace ?? undefined
}

function readPlace(): string | undefined {
  try {
    const boot = fs.readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim()
    const namespace = /\[(\d+)\]/.exec(fs.readlinkSync('/proc/self/ns/pid'))?.[1]
    if (!/^[0-9a-f-]+$/.test(boot) || namespace === undefined) return undefined
    return `${boot.replaceAll('-', '')}-${namespace}`
  } catch {
    return undefined
  }
}

/** Whether the owner a record's name gives has surely ended (never when it cannot be known). */
function ownerEnded(recordName: string): boolean {
  const [, boot, namespace, pid, start] = /@([0-9a-f]+)-(\d+)-(\d+)-(\d+)-[0-9a-f]+$/.exec(
    recordName,
  ) ?? [undefined, undefined, undefined, undefined, undefined]
  const place = hostPlace()
  if (start === undefined || place === undefined || `${boot}-${namespace}` !== place) return false
  return processEnded(Number(pid), start)
}

/**
 * Takes `ref`'s lock: linked from a fresh owner record, or, when a writer that has ended left
 * it, taken over. Undefined when a live writer (or an unknown one) holds it.
 */
export function takeRefLock(gitDir: string, ref: string): RefLock | undefined {
  const lockFile = path.join(gitDir, `${ref}.lock`)
  const record = newRecord(gitDir, ref)
  if (record === undefined) return plainLock(lockFile)
  const fd = fs.openSync(record, 'wx', 0o644)
  try {
    fs.linkSync(record, lockFile)
    return { fd, lockFile, record }
  } catch (error) {
    fs.closeSync(fd)
    return refused(gitDir, ref, record, error)
  }
}

/** What {@link takeRefLock} does, making the record and the link on the thread pool. */
export async function takeRefLockAsync(gitDir: string, ref: string): Promise<RefLock | undefined> {
  const lockFile = path.join(gitDir, `${ref}.lock`)
  const record = newRecord(gitDir, ref)
  if (record === undefined) return plainLock(lockFile)
  const fd = await openFile(record, 'wx', 0o644)
  try {
    await fsPromises.link(record, lockFile)
    return { fd, lockFile, record }
  } catch (error) {
    fs.closeSync(fd)
    return refused(gitDir, ref, record, error)
  }
}

/** A fresh record's path for `ref` (its folder made); undefined when owners cannot be named. */
function newRecord(gitDir: string, ref: string): string | undefined {
  const name = owner()
  if (name === undefined) return undefined
  const folder = recordsOf(gitDir)
  if (!swept.has(folder)) {
    fs.mkdirSync(folder, { recursive: true })
    sweep(folder)
    swept.add(folder)
  }
  return path.join(folder, `${keyOf(ref)}@${name}-${randomBytes(4).toString('hex')}`)
}

/** After the link was refused: the lock taken over from an ended writer, or undefined. */
function refused(gitDir: string, ref: string, record: string, error: unknown): RefLock | undefined {
  const lockFile = path.join(gitDir, `${ref}.lock`)
  const code = (error as NodeJS.ErrnoException).code
  if (code === 'EEXIST' && takeOver(gitDir, ref, lockFile, record)) {
    return { fd: fs.openSync(record, 'r+'), lockFile, record, takenOver: true }
  }
  fs.rmSync(record, { force: true })
  if (code === 'EEXIST') return undefined
  // No hard links on this file system: git's plain lock, with no owner named.
  if (code === 'EPERM' || code === 'ENOTSUP' || code === 'EOPNOTSUPP') return plainLock(lockFile)
  throw error
}

/** The record folders swept by this process. */
const swept = new Set<string>()

/**
 * Removes the records of ended owners that are no lock (an owner killed after its move, before
 * removing its record). Its owner ended, so such a record can never become a lock now.
 */
function sweep(folder: string): void {
  for (const name of fs.readdirSync(folder)) {
    if (!ownerEnded(name)) continue
    const lockFile = path.join(
      path.dirname(folder),
      `${name.slice(0, name.lastIndexOf('@')).replaceAll('.', '/')}.lock`,
    )
    if (!sameFile(statOf(lockFile), statOf(path.join(folder, name))))
      fs.rmSync(path.join(folder, name), { force: true })
  }
}

/**
 * Renames the record of `lockFile`'s ended owner to `record` (ours), when there is one, and
 * says whether the lock is ours now.
 */
function takeOver(gitDir: string, ref: string, lockFile: string, record: string): boolean {
  const lock = statOf(lockFile)
  if (lock === undefined || lock.nlink < 2) return false
  const prefix = `${keyOf(ref)}@`
  for (const name of fs.readdirSync(recordsOf(gitDir))) {
    if (!name.startsWith(prefix) || !ownerEnded(name)) continue
    const found = path.join(recordsOf(gitDir), name)
    const stat = statOf(found)
    if (!sameFile(stat, lock)) continue
    try {
      fs.renameSync(found, record)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false // another took it
      throw error
    }
    // Ours now, so its file stays; still the lock unless another taker finished with it first.
    return sameFile(statOf(lockFile), stat)
  }
  return false
}

function sameFile(one: fs.Stats | undefined, other: fs.Stats | undefined): boolean {
  return one !== undefined && other !== undefined && one.ino === other.ino && one.dev === other.dev
}

function statOf(file: string): fs.Stats | undefined {
  try {
    return fs.lstatSync(file)
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw error
  }
}

/** git's own lock: `lockFile` made exclusively; undefined when it exists. */
function plainLock(lockFile: string): RefLock | undefined {
  try {
    return { fd: fs.openSync(lockFile, 'wx', 0o644), lockFile, record: undefined }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return undefined
    throw error
  }
}

/** Renames the lock (closed, its value synced) over `file`: the move is done. */
export function commitRefLock(lock: RefLock, file: string): void {
  fs.closeSync(lock.fd)
  fs.renameSync(lock.lockFile, file)
  if (lock.record !== undefined) fs.rmSync(lock.record, { force: true })
}

/** Drops the lock: closes it and removes both its names (the lock's first: it was ours). */
export function dropRefLock(lock: RefLock): void {
  try {
    fs.closeSync(lock.fd)
  } catch {
    // closed before a rename that failed
  }
  fs.rmSync(lock.lockFile, { force: true })
  if (lock.record !== undefined) fs.rmSync(lock.record, { force: true })
}

/** What {@link dropRefLock} does, each removal on the thread pool. */
export async function dropRefLockAsync(lock: RefLock): Promise<void> {
  fs.closeSync(lock.fd)
  await fsPromises.rm(lock.lockFile, { force: true })
  if (lock.record !== undefined) await fsPromises.unlink(lock.record).catch(() => undefined)
}
