/**
 * @module jail/execute-only-node
 * The Node a warm jail's supervisor runs: a copy of this process's Node that the jail's user
 * may execute but not read. The supervisor runs as the same user as the commands it starts,
 * so if it were dumpable any command could `ptrace` it or write `/proc/PID/mem` and take over
 * every later command of the session. Node cannot make itself non-dumpable (it has no
 * `prctl`), but the kernel does it for any program its user cannot read when it is exec'd
 * (`would_dump`): then only a holder of CAP_SYS_PTRACE reaches it. Decision 0036.
 *
 * The copy is made once per Node binary (its path, device, inode, size and change time) in a
 * folder of the caller's own under the temporary folder (`eitri-node-UID`, mode 0711), written
 * under a temporary name and renamed into place, and is reused while it is still the caller's,
 * of mode 0111 and of the source's size. Nothing of it is trusted otherwise: a folder of that
 * name that is not the caller's own, a link, or a folder others may write refuses the copy,
 * and the warm jail does not start (every command then runs cold, one bubblewrap each).
 */
import { createHash, randomBytes } from 'node:crypto'
import { statSync } from 'node:fs'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { EitriError } from '../errors/eitri-error.ts'

/** The copy's mode: execute only, for everyone (root reads it all the same). */
export const EXECUTE_ONLY_MODE = 0o111

/** The folder's mode: the jail's user (`nobody` for a root caller) must reach the copy. */
const FOLDER_MODE = 0o711

/** Copies being made or made, by source (and its version) and temporary folder. */
const copies = new Map<string, Promise<string>>()

/**
 * The path of the execute-only copy of `source`, made on first use.
 *
 * @throws EitriError `jail_unavailable` when the copy cannot be made or its folder is not the
 *   caller's own.
 */
export function executeOnlyNode(
  source: string = process.execPath,
  temporaryRoot: string = os.tmpdir(),
): Promise<string> {
  let version: string
  try {
    version = identity(statSync(source))
  } catch (error) {
    return Promise.reject(unprepared(source, error))
  }
  const key = JSON.stringify([source, version, temporaryRoot])
  let copy = copies.get(key)
  if (copy === undefined) {
    copy = makeCopy(source, temporaryRoot)
    copies.set(key, copy)
    // A failure is not kept: the next warm jail tries again.
    copy.catch(() => copies.delete(key))
  }
  return copy
}

async function makeCopy(source: string, temporaryRoot: string): Promise<string> {
  try {
    const real = await fs.realpath(source)
    const stat = await fs.stat(real)
    const folder = await ownFolder(
      path.join(temporaryRoot, `eitri-node-${process.getuid?.() ?? 'user'}`),
    )
    const pathHash = hash(real)
    const name = `node-${pathHash}-${hash(identity(stat))}`
    const copy = path.join(folder, name)
    if (await usableCopy(copy, stat.size)) return copy
    const temporary = path.join(folder, `.${name}.${randomBytes(6).toString('hex')}`)
    try {
      await fs.copyFile(real, temporary, fs.constants.COPYFILE_EXCL | fs.constants.COPYFILE_FICLONE)
      await fs.chmod(temporary, EXECUTE_ONLY_MODE)
      await fs.rename(temporary, copy)
    } finally {
      await fs.rm(temporary, { force: true })
    }
    if (!(await usableCopy(copy, stat.size))) throw new Error(`${copy} changed as it was made`)
    // Copies of an older Node at the same path are no use any more.
    for (const entry of await fs.readdir(folder))
      if (entry.startsWith(`node-${pathHash}-`) && entry !== name)
        await fs.rm(path.join(folder, entry), { force: true })
    return copy
  } catch (error) {
    throw unprepared(source, error)
  }
}

function unprepared(source: string, error: unknown): EitriError {
  if (error instanceof EitriError) return error as EitriError
  return new EitriError(
    'jail_unavailable',
    `the warm jail's Node could not be prepared (an execute-only copy of ${source}): ${error instanceof Error ? error.message : String(error)}`,
    { cause: error },
  )
}

/** One version of a file: a new install at the same path is another. */
function identity(stat: { dev: number; ino: number; size: number; ctimeMs: number }): string {
  return `${stat.dev}:${stat.ino}:${stat.size}:${stat.ctimeMs}`
}

/** `folder`, made if missing; refused unless it is a folder of the caller's, closed to writes. */
async function ownFolder(folder: string): Promise<string> {
  await fs.mkdir(folder, { mode: FOLDER_MODE }).catch((error: NodeJS.ErrnoException) => {
    if (error.code !== 'EEXIST') throw error
  })
  const stat = await fs.lstat(folder)
  if (
    !stat.isDirectory() ||
    stat.uid !== process.getuid?.() ||
    (stat.mode & 0o7777) !== FOLDER_MODE
  )
    throw new EitriError(
      'jail_unavailable',
      `the warm jail's Node is kept in ${folder}, which is not a folder of this user with mode 0711; remove it and try again`,
    )
  return folder
}

/** Whether `copy` is a finished copy: the caller's, execute-only, of the source's size. */
async function usableCopy(copy: string, size: number): Promise<boolean> {
  const stat = await fs.lstat(copy).catch(() => undefined)
  return (
    stat !== undefined &&
    stat.isFile() &&
    stat.uid === process.getuid?.() &&
    (stat.mode & 0o7777) === EXECUTE_ONLY_MODE &&
    stat.size === size
  )
}

function hash(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 16)
}
