/**
 * @module jail/execute-only-copy
 * Copies of the programs a jail trusts, which the jail's user may execute but not read: Perl
 * (PID 1 of every jail, the reaper, spared by every kill of a command's stragglers) and Node
 * (a warm jail's supervisor, PID 2). Both run as the same user as the commands the supervisor starts, so were
 * they dumpable, any command could `ptrace` them or write `/proc/PID/mem`, outlive its end and
 * take over every later command of the session. Node cannot make itself non-dumpable (it has
 * no `prctl`) and bubblewrap does not, but the kernel does it for any program its user cannot
 * read when it is exec'd (`would_dump`): then only a holder of CAP_SYS_PTRACE reaches it.
 * Decision 0036.
 *
 * A copy is made once per program (its real path, device, inode, size and change time) in a
 * folder of the caller's own under the temporary folder (`eitri-execute-only-UID`, mode 0711),
 * written under a temporary name and renamed into place, and reused while it is still the
 * caller's, of mode 0111 and of the source's size. Nothing of it is trusted otherwise: a
 * folder of that name that is not the caller's own, a link, or a folder others may write is
 * not used; the copies go to a folder of this process's own with a random name instead (another
 * account could make the shared name first, and without the copies every jail's PID 1 would be
 * bubblewrap's, which commands can trace: decision 0038). Where no copy can be made at all (a
 * `noexec` temporary folder), the warm jail does not start and cold jails keep bubblewrap's PID 1.
 */
import { createHash, randomBytes } from 'node:crypto'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { EitriError } from '../errors/eitri-error.ts'
import { ownedPrefix } from '../util/owned-folders.ts'

/** The copy's mode: execute only, for everyone (root reads it all the same). */
export const EXECUTE_ONLY_MODE = 0o111

/** The folder's mode: the jail's user (`nobody` for a root caller) must reach the copy. */
const FOLDER_MODE = 0o711

/** Where a bare program name is looked up: the PATH bubblewrap's launch runs on (jailed-process.ts). */
const LAUNCH_PATH = ['/usr/local/bin', '/usr/bin', '/bin']

/**
 * The path of the execute-only copy of `program` (a path, or a name looked up on the launch
 * PATH), made on first use; a set-user-ID program as it is (the kernel never lets its caller
 * trace it).
 *
 * @throws EitriError `jail_unavailable` when the copy cannot be made or its folder is not the
 *   caller's own.
 */
export async function executeOnlyCopy(
  program: string,
  temporaryRoot: string = os.tmpdir(),
): Promise<string> {
  try {
    const source = program.includes('/') ? program : await findProgram(program)
    const copy = await makeCopy(source, temporaryRoot)
    // On a `noexec` mount the copy is made but cannot run (access(2) says so): no copy, then.
    await fs.access(copy, fs.constants.X_OK).catch((error: unknown) => {
      throw new Error(`${copy} cannot be executed there (a noexec mount?)`, { cause: error })
    })
    return copy
  } catch (error) {
    if (error instanceof EitriError) throw error
    throw new EitriError(
      'jail_unavailable',
      `the warm jail's programs could not be prepared (an execute-only copy of ${program}): ${error instanceof Error ? error.message : String(error)}`,
      { cause: error },
    )
  }
}

async function findProgram(name: string): Promise<string> {
  for (const folder of LAUNCH_PATH) {
    const candidate = path.join(folder, name)
    if (
      await fs.access(candidate, fs.constants.X_OK).then(
        () => true,
        () => false,
      )
    )
      return candidate
  }
  throw new Error(`${name} is not on ${LAUNCH_PATH.join(':')}`)
}

async function makeCopy(source: string, temporaryRoot: string): Promise<string> {
  const real = await fs.realpath(source)
  const stat = await fs.stat(real)
  // Set-user-ID (0o4000): the kernel never lets its caller trace it, and a copy would lose it.
  if ((stat.mode & 0o4000) !== 0) return real
  const folder = await ownFolder(
    path.join(temporaryRoot, `eitri-execute-only-${process.getuid?.() ?? 'user'}`),
  ).catch((error: unknown) => {
    // Another account made a folder of that name first (or a link): a folder of this process's
    // own instead, whose random name no one can make ahead. Refusing would leave every jail's
    // PID 1 to bubblewrap, which any command can trace (decision 0038).
    if (!(error instanceof EitriError)) throw error
    return privateFolder(temporaryRoot)
  })
  const pathHash = hash(real)
  const name = `${path.basename(real)}-${pathHash}-${hash(identity(stat))}`
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
  // Copies of an older version at the same path are no use any more.
  for (const entry of await fs.readdir(folder))
    if (entry.startsWith(`${path.basename(real)}-${pathHash}-`) && entry !== name)
      await fs.rm(path.join(folder, entry), { force: true })
  return copy
}

/** One version of a file: a new install at the same path is another. */
function identity(stat: { dev: number; ino: number; size: number; ctimeMs: number }): string {
  return `${stat.dev}:${stat.ino}:${stat.size}:${stat.ctimeMs}`
}

/** `folder`, made if missing; refused unless it is a folder of the caller's, closed to writes. */
async function ownFolder(folder: string): Promise<string> {
  const made = await fs.mkdir(folder, { mode: FOLDER_MODE }).then(
    () => true,
    (error: NodeJS.ErrnoException) => {
      if (error.code === 'EEXIST') return false
      throw error
    },
  )
  // Whatever the umask took away.
  if (made) await fs.chmod(folder, FOLDER_MODE)
  const stat = await fs.lstat(folder)
  if (
    !stat.isDirectory() ||
    stat.uid !== process.getuid?.() ||
    (stat.mode & 0o7777) !== FOLDER_MODE
  )
    throw new EitriError(
      'jail_unavailable',
      `the warm jail's programs are kept in ${folder}, which is not a folder of this user with mode 0711; remove it and try again`,
    )
  return folder
}

/** This process's own copy folder under each temporary root, made at the first refusal. */
const PRIVATE_FOLDERS = new Map<string, Promise<string>>()

/**
 * A 0711 folder of this process's (`eitri-execute-only-PID.START-XXXXXX`, removed by the sweep
 * of folders whose process ended, jail/temporary-folders.ts), for when the shared one is refused.
 */
function privateFolder(temporaryRoot: string): Promise<string> {
  let made = PRIVATE_FOLDERS.get(temporaryRoot)
  if (made === undefined) {
    made = (async () => {
      const folder = await fs.mkdtemp(ownedPrefix('execute-only', temporaryRoot))
      await fs.chmod(folder, FOLDER_MODE)
      return ownFolder(folder)
    })()
    PRIVATE_FOLDERS.set(temporaryRoot, made)
    made.catch(() => PRIVATE_FOLDERS.delete(temporaryRoot))
  }
  return made
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
