/**
 * @module workspace/directory-tree
 * A real folder, operated on by workspace-relative paths that the path policy has already
 * resolved. It never follows a symbolic link on its own: reads open with O_NOFOLLOW, writes go
 * through a temporary file and a rename whose parent chain is checked again just before. For a
 * root caller every read, listing and write is first decided as the workspace's owner would
 * be (owner-access.ts, decision 0060); the kernel decides for any other caller.
 */
import { randomBytes } from 'node:crypto'
import {
  readFile as readDescriptorCallback,
  read as readCallback,
  closeSync,
  constants,
  fstatSync,
  ftruncateSync,
  lstatSync,
  openSync,
  readdirSync,
  readlinkSync,
  readSync,
  realpathSync,
  writeSync,
} from 'node:fs'
import fs from 'node:fs/promises'
import path from 'node:path'
import { promisify } from 'node:util'
import { EitriError } from '../errors/eitri-error.ts'
import { CONTENT_CHUNK_BYTES, isContentSource } from '../tool/file-content.ts'
import type { ContentSource, EntryStat, EntryType, ReadBounds } from '../ports/workspace-view.ts'
import type { DirectoryEntry, WorkspaceTree } from './workspace-tree.ts'
import {
  actingOwner,
  isAccessRefused,
  ownerMay,
  ownerRefusal,
  type WorkspaceOwner,
} from './owner-access.ts'
import { assertOwnerMayChange, ownerEnters } from './owner-paths.ts'

export type { DirectoryEntry }

/** Files up to this size are read with synchronous calls; larger ones asynchronously. */
const SYNC_READ_MAX_BYTES = 1024 * 1024

/**
 * Raw access to one folder. Paths are relative, already resolved, `/`-separated; `''` is the
 * root. Everything here assumes the caller asked the path policy first.
 */
export class DirectoryTree implements WorkspaceTree {
  /** The folder's real host path. Never shown to a model. */
  readonly root: string
  /**
   * Whose access a root caller takes (the folder's user and group); undefined for any other
   * caller, whose every call the kernel already decides, so it pays no extra look.
   *
   * @internal
   */
  readonly owner: WorkspaceOwner | undefined
  /**
   * Folders a root caller's look found the owner may enter, kept until the event loop's next
   * turn: one call asks for the same folders several times (the path policy's walk, a stat, the
   * read), and nothing else of eitri runs in between. Judged again on the next turn.
   */
  readonly #entered = new Set<string>()

  /** @throws EitriError `not_found` / `not_directory` when `root` is not an existing folder. */
  constructor(root: string) {
    let real: string
    try {
      real = realpathSync(root)
    } catch {
      throw new EitriError('not_found', `Workspace folder not found: ${root}`)
    }
    this.root = real
    this.owner = actingOwner(real)
  }

  /** `ownerEnters` for a read, with the folders this turn already judged. */
  #ownerEnters(owner: WorkspaceOwner, relativePath: string): boolean {
    if (this.#entered.size === 0) setImmediate(() => this.#entered.clear()).unref()
    return ownerEnters(this.root, owner, relativePath, 'read', this.#entered)
  }

  /** `assertOwnerMayChange`; a change may turn a folder judged this turn into something else. */
  #mayChange(
    owner: WorkspaceOwner,
    relativePath: string,
    change: 'write' | 'remove' | 'folder',
  ): void {
    this.#entered.clear()
    assertOwnerMayChange(this.root, owner, relativePath, change)
  }

  /** The host path of a relative path. */
  hostPath(relativePath: string): string {
    return relativePath === '' ? this.root : path.join(this.root, relativePath)
  }

  // Metadata calls and small reads use the synchronous system calls: on a local disk they take
  // a few microseconds, while each trip through libuv's thread pool costs tens. Large reads stay
  // asynchronous so the server never blocks on them. (docs/decisions/0002-sync-metadata.md)

  async kind(relativePath: string): Promise<'symlink' | 'directory' | 'other' | undefined> {
    const stat = this.statNow(relativePath)
    if (stat === undefined) return undefined
    return stat.type === 'symlink' || stat.type === 'directory' ? stat.type : 'other'
  }

  async readlink(relativePath: string): Promise<string> {
    if (this.owner !== undefined) this.#ownerEnters(this.owner, relativePath)
    return readlinkSync(this.hostPath(relativePath))
  }

  /** Describes an entry without following it; undefined when it does not exist. */
  async stat(relativePath: string): Promise<EntryStat | undefined> {
    return this.statNow(relativePath)
  }

  /** `stat`, synchronously. */
  statNow(relativePath: string): EntryStat | undefined {
    if (this.owner !== undefined && !this.#ownerEnters(this.owner, relativePath)) return undefined
    let stat
    try {
      stat = lstatSync(this.hostPath(relativePath), { throwIfNoEntry: false })
    } catch (error) {
      if (isMissing(error)) return undefined
      throw refusedByKernel(error, relativePath, 'read')
    }
    if (stat === undefined) return undefined
    return {
      type: entryType(stat),
      size: stat.size,
      mode: stat.mode & 0o7777,
      modifiedMs: stat.mtimeMs,
    }
  }

  /**
   * Reads a regular file, refusing to follow a link that appeared since the policy looked. With
   * `bounds`, never more than they allow is read, even if the file grows meanwhile.
   */
  async readFile(relativePath: string, bounds: ReadBounds = {}): Promise<Uint8Array> {
    const owner = this.owner
    if (owner !== undefined) this.#ownerEnters(owner, relativePath)
    // Never waiting: a FIFO (put there by a program, or swapped in since the policy looked)
    // would block the open, and eitri's one thread with it, until some writer came.
    let descriptor: number
    try {
      descriptor = openSync(
        this.hostPath(relativePath),
        constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK,
      )
    } catch (error) {
      throw refusedByKernel(error, relativePath, 'read')
    }
    try {
      const stat = fstatSync(descriptor)
      if (!stat.isFile() && !stat.isDirectory()) throw notRegular(relativePath)
      // Judged on what was opened, so a file swapped in after a look is judged itself.
      if (owner !== undefined && !ownerMay(owner, stat, 'read'))
        throw ownerRefusal(relativePath, 'read')
      const { size } = stat
      if (bounds.range !== undefined) {
        const { offset, length } = bounds.range
        return await readAt(descriptor, offset, Math.min(length, Math.max(size - offset, 0)))
      }
      if (bounds.maxBytes !== undefined) {
        if (size > bounds.maxBytes) throw tooLarge(relativePath, size, bounds.maxBytes)
        // One byte past the size: a file that grew since fstat is read again up to one byte
        // past the limit, so it is caught, never read whole.
        let read = await readAt(descriptor, 0, size + 1)
        if (read.length > size) read = await readAt(descriptor, 0, bounds.maxBytes + 1)
        if (read.length > bounds.maxBytes)
          throw tooLarge(relativePath, read.length, bounds.maxBytes)
        return read
      }
      return size <= SYNC_READ_MAX_BYTES
        ? readAll(descriptor, size)
        : await readDescriptor(descriptor)
    } finally {
      closeSync(descriptor)
    }
  }

  /** Names and kinds of a folder's entries, sorted by name. */
  async list(relativePath: string): Promise<DirectoryEntry[]> {
    if (this.owner !== undefined) {
      this.#ownerEnters(this.owner, relativePath)
      const folder = lstatSync(this.hostPath(relativePath), { throwIfNoEntry: false })
      if (folder?.isDirectory() === true && !ownerMay(this.owner, folder, 'read'))
        throw ownerRefusal(relativePath, 'read')
    }
    let entries
    try {
      entries = readdirSync(this.hostPath(relativePath), { withFileTypes: true })
    } catch (error) {
      throw refusedByKernel(error, relativePath, 'read')
    }
    return entries
      .map((entry) => ({ name: entry.name, type: entryType(entry) }))
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
  }

  /**
   * Writes a file atomically: a new temporary file beside it, flushed, given the old file's
   * permission bits (never setuid, setgid or sticky), then renamed over it. Creates missing folders. Returns whether the file is new.
   * For a root caller, `mode` applies to a new file or one that is the owner's: another user's
   * file keeps its bits, as the owner could only write it in place.
   * Content read in pieces is copied a piece at a time, and pieces of zeros stay holes, so a
   * sparse file stays sparse and is never held whole in memory.
   */
  async writeFileAtomic(
    relativePath: string,
    data: Uint8Array | ContentSource,
    options: { mode?: number | undefined } = {},
  ): Promise<{ created: boolean }> {
    const parent = path.posix.dirname(relativePath) === '.' ? '' : path.posix.dirname(relativePath)
    if (this.owner !== undefined) this.#mayChange(this.owner, relativePath, 'write')
    await this.#makeFolders(parent)
    const existing = await this.stat(relativePath)
    if (existing?.type === 'directory') {
      throw new EitriError('is_directory', `Path is a directory, not a file: ${relativePath}`)
    }
    const target = this.hostPath(relativePath)
    // A root caller's new file is the owner's, and a replaced one keeps its user and group, as
    // the owner's own write would leave them: the owner (and the jail) may change it again.
    const owner = this.owner === undefined ? undefined : (this.#idsOf(target) ?? this.owner)
    const temporary = path.join(
      this.hostPath(parent),
      `.${path.basename(target)}.eitri-${randomBytes(6).toString('hex')}.tmp`,
    )
    const handle = await fs
      .open(
        temporary,
        constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW,
        0o666,
      )
      .catch((error: unknown) => {
        throw refusedByKernel(error, relativePath, 'write')
      })
    try {
      try {
        if (isContentSource(data)) copyKeepingHoles(data, handle.fd)
        else await handle.writeFile(data)
        // Permission bits only, also the old file's: the new file is the writer's (root, for
        // a root eitri), so an old setuid bit would make the new content run as the writer.
        // A root caller changes the bits of the owner's own file only (user and group both the
        // owner's, as the jail's kernel allows a change of mode): another's file the owner may
        // at most write in place, which leaves its bits as they were.
        const keepsBits = owner !== undefined && !isOwners(owner, this.owner)
        const mode =
          (keepsBits ? undefined : options.mode) ??
          (existing?.type === 'file' ? existing.mode : undefined)
        if (owner !== undefined) await handle.chown(owner.uid, owner.gid)
        if (mode !== undefined) await handle.chmod(mode & 0o777)
        await handle.datasync()
      } finally {
        await handle.close()
      }
      await this.#assertNoLinks(parent)
      await fs.rename(temporary, target)
    } catch (error) {
      await fs.rm(temporary, { force: true })
      throw error
    }
    return { created: existing === undefined }
  }

  /** Creates a folder and any missing parents. */
  async makeFolder(relativePath: string): Promise<void> {
    if (this.owner !== undefined) this.#mayChange(this.owner, relativePath, 'folder')
    await this.#makeFolders(relativePath)
  }

  /**
   * Removes a file, a link (never its target) or an empty folder. Missing is not an error.
   *
   * A folder that is not empty fails with the system's ENOTEMPTY.
   */
  async remove(relativePath: string): Promise<void> {
    const stat = await this.stat(relativePath)
    if (stat === undefined) return
    if (this.owner !== undefined) this.#mayChange(this.owner, relativePath, 'remove')
    await this.#assertNoLinks(parentOf(relativePath))
    if (stat.type === 'directory') await fs.rmdir(this.hostPath(relativePath))
    else await fs.unlink(this.hostPath(relativePath))
  }

  /** Creates (or replaces) a symbolic link at `relativePath` pointing to `target`, as written. */
  async createSymlink(relativePath: string, target: string): Promise<void> {
    const parent = parentOf(relativePath)
    if (this.owner !== undefined) this.#mayChange(this.owner, relativePath, 'remove')
    await this.#makeFolders(parent)
    const existing = await this.stat(relativePath)
    if (existing?.type === 'directory') {
      throw new EitriError('is_directory', `Path is a directory, not a link: ${relativePath}`)
    }
    await this.#assertNoLinks(parent)
    if (existing !== undefined) await fs.unlink(this.hostPath(relativePath))
    await fs.symlink(target, this.hostPath(relativePath))
    if (this.owner !== undefined)
      await fs.lchown(this.hostPath(relativePath), this.owner.uid, this.owner.gid)
  }

  /** Creates each missing folder of `relativePath`, refusing to pass through anything but folders. */
  async #makeFolders(relativePath: string): Promise<void> {
    let current = ''
    for (const component of relativePath === '' ? [] : relativePath.split('/')) {
      current = current === '' ? component : `${current}/${component}`
      const stat = await this.stat(current)
      if (stat === undefined) {
        try {
          await fs.mkdir(this.hostPath(current))
          // A root caller's folder is the owner's, so the owner (and the jail) may fill it.
          if (this.owner !== undefined)
            await fs.lchown(this.hostPath(current), this.owner.uid, this.owner.gid)
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
        }
        continue
      }
      if (stat.type !== 'directory') {
        throw new EitriError(
          'not_directory',
          `Cannot create ${relativePath}: ${current} exists and is not a folder`,
        )
      }
    }
    await this.#assertNoLinks(relativePath)
  }

  /** The user and group of the file at a host path; undefined when it is not a file. */
  #idsOf(hostPath: string): { uid: number; gid: number } | undefined {
    const stat = lstatSync(hostPath, { throwIfNoEntry: false })
    return stat?.isFile() === true ? { uid: stat.uid, gid: stat.gid } : undefined
  }

  /** Re-checks, just before a rename, that no component of the folder became a link. */
  async #assertNoLinks(relativePath: string): Promise<void> {
    const real = await fs.realpath(this.hostPath(relativePath))
    if (real !== this.hostPath(relativePath)) {
      throw new EitriError(
        'path_outside_workspace',
        `${relativePath} changed into a symbolic link while being written; nothing was written`,
      )
    }
  }
}

/** Whether `ids` are both the owner's. */
function isOwners(ids: { uid: number; gid: number }, owner: WorkspaceOwner | undefined): boolean {
  return owner !== undefined && ids.uid === owner.uid && ids.gid === owner.gid
}

/** Copies `source` into the empty file `descriptor`, leaving runs of zeros as holes. */
function copyKeepingHoles(source: ContentSource, descriptor: number): void {
  const buffer = Buffer.allocUnsafe(CONTENT_CHUNK_BYTES)
  let position = 0
  while (position < source.size) {
    const read = source.read(
      buffer.subarray(0, Math.min(buffer.byteLength, source.size - position)),
      position,
    )
    if (read === 0) break
    const chunk = buffer.subarray(0, read)
    if (!isAllZero(chunk)) writeAll(descriptor, chunk, position)
    position += read
  }
  // The length, holes at the end included (and nothing past what the source gave).
  ftruncateSync(descriptor, position)
}

function writeAll(descriptor: number, chunk: Buffer, position: number): void {
  let written = 0
  while (written < chunk.byteLength) {
    written += writeSync(descriptor, chunk, written, chunk.byteLength - written, position + written)
  }
}

function isAllZero(chunk: Buffer): boolean {
  // Compares in 8-byte words where it can: a piece of a sparse file is all zeros.
  const words = Math.floor(chunk.byteLength / 8)
  for (let index = 0; index < words; index++)
    if (chunk.readBigUInt64LE(index * 8) !== 0n) return false
  for (let index = words * 8; index < chunk.byteLength; index++)
    if (chunk[index] !== 0) return false
  return true
}

/**
 * The kernel's own refusal (`EACCES`) of a caller that is not root, as the tools give the rule's
 * (anything else is thrown as it is).
 */
function refusedByKernel(error: unknown, relativePath: string, need: 'read' | 'write'): unknown {
  return isAccessRefused(error) ? ownerRefusal(relativePath, need, { caller: true }) : error
}

function parentOf(relativePath: string): string {
  const parent = path.posix.dirname(relativePath)
  return parent === '.' ? '' : parent
}

function entryType(stat: {
  isFile(): boolean
  isDirectory(): boolean
  isSymbolicLink(): boolean
}): EntryType {
  if (stat.isSymbolicLink()) return 'symlink'
  if (stat.isDirectory()) return 'directory'
  if (stat.isFile()) return 'file'
  return 'other'
}

/**
 * Whether `lstat` found no entry at the path: none there, a file where a folder should be on the
 * way (ENOTDIR), or a link on the way that leads round to itself (ELOOP: `loop -> loop`, so
 * `loop/x` is nothing; `lstat` never follows the last name, so the loop is always on the way).
 */
function isMissing(error: unknown): boolean {
  const code = (error as NodeJS.ErrnoException).code
  return code === 'ENOENT' || code === 'ENOTDIR' || code === 'ELOOP'
}

const readDescriptor = promisify(readDescriptorCallback) as (descriptor: number) => Promise<Buffer>
const readChunk = promisify(readCallback)

/** Up to `length` bytes from `offset` (fewer at the end of the file). */
async function readAt(descriptor: number, offset: number, length: number): Promise<Uint8Array> {
  const buffer = Buffer.allocUnsafe(length)
  let filled = 0
  while (filled < length) {
    const read =
      length <= SYNC_READ_MAX_BYTES
        ? readSync(descriptor, buffer, filled, length - filled, offset + filled)
        : (await readChunk(descriptor, buffer, filled, length - filled, offset + filled)).bytesRead
    if (read === 0) break
    filled += read
  }
  return buffer.subarray(0, filled)
}

function notRegular(relativePath: string): EitriError {
  return new EitriError(
    'invalid_input',
    `Not a regular file (a FIFO, a socket or a device), so it is not read: ${relativePath}.`,
  )
}

function tooLarge(relativePath: string, size: number, maxBytes: number): EitriError {
  return new EitriError(
    'file_too_large',
    `File is ${size} bytes or more, over the ${maxBytes}-byte limit of this operation: ${relativePath}.`,
    { data: { size } },
  )
}

/** What of `content` (a whole file) `bounds` allows. */
export function boundContent(
  content: Uint8Array,
  relativePath: string,
  bounds: ReadBounds,
): Uint8Array {
  if (bounds.range !== undefined) {
    const { offset, length } = bounds.range
    return content.subarray(
      Math.min(offset, content.length),
      Math.min(offset + length, content.length),
    )
  }
  if (bounds.maxBytes !== undefined && content.length > bounds.maxBytes)
    throw tooLarge(relativePath, content.length, bounds.maxBytes)
  return content
}

/** Reads a whole file from a descriptor; a file that grew since fstat is read to its end. */
function readAll(descriptor: number, size: number): Uint8Array {
  let buffer = Buffer.allocUnsafe(Math.max(size, 1))
  let filled = 0
  for (;;) {
    if (filled === buffer.length) {
      const larger = Buffer.allocUnsafe(buffer.length * 2)
      buffer.copy(larger)
      buffer = larger
    }
    const read = readSync(descriptor, buffer, filled, buffer.length - filled, null)
    if (read === 0) break
    filled += read
  }
  return buffer.subarray(0, filled)
}
