/**
 * @module workspace/blob-drive
 * The blob drive: content-addressed files (sha256 ids) in a tree of folders, kept with the
 * workspace's history (each change is a commit on `refs/eitri/drive`) and an append-only
 * catalog that remembers every version. No database.
 */
import { createHash } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { z } from 'zod'
import { EitriError } from '../errors/eitri-error.ts'
import type { DriveAccess, DriveEntry, DriveFile } from '../ports/drive-access.ts'
import { appendStateLine, readStateLines } from './state-file.ts'
import { encodeTree, type TreeEntry } from './git/git-objects.ts'
import type { WorkspaceHistory } from './history.ts'
import { objectIdSchema, relativePathSchema, timestampSchema } from './state-schemas.ts'

/** The reference of the drive's tree. */
export const DRIVE_REF = 'refs/eitri/drive'

type CatalogLine =
  | {
      readonly op: 'write'
      readonly path: string
      readonly id: string
      readonly oid: string
      readonly size: number
      readonly when: string
    }
  | { readonly op: 'folder' | 'remove'; readonly path: string; readonly when: string }

/**
 * A catalog line read back. Its paths are written under the drive's host copy, so each is
 * checked as a drive path is.
 */
const catalogLineSchema = z.discriminatedUnion('op', [
  z.strictObject({
    op: z.literal('write'),
    path: relativePathSchema,
    id: z.string().regex(/^sha256:[0-9a-f]{64}$/, 'a sha256 content id'),
    oid: objectIdSchema,
    size: z.number().int().nonnegative(),
    when: timestampSchema,
  }),
  z.strictObject({
    op: z.enum(['folder', 'remove']),
    path: relativePathSchema,
    when: timestampSchema,
  }),
]) satisfies z.ZodType<CatalogLine>

/** Longest catalog line (a path is at most 4096 characters). */
const MAX_CATALOG_LINE_BYTES = 64 * 1024

interface Current extends DriveFile {
  readonly oid: string
}

/** The drive of one workspace. */
export class BlobDrive implements DriveAccess {
  readonly #history: WorkspaceHistory
  readonly #catalog: string
  readonly #files = new Map<string, Current>()
  readonly #folders = new Set<string>([''])
  readonly #versions = new Map<string, Current[]>()
  readonly #byId = new Map<string, Current>()
  readonly #listeners = new Set<() => void>()

  constructor(history: WorkspaceHistory, stateDir: string) {
    this.#history = history
    this.#catalog = path.join(stateDir, 'drive-catalog.jsonl')
    for (const line of readCatalog(this.#catalog)) this.#apply(line)
  }

  /** Calls `listener` after every change (to refresh a materialized copy). */
  onChange(listener: () => void): () => void {
    this.#listeners.add(listener)
    return () => this.#listeners.delete(listener)
  }

  async write(name: string, data: Uint8Array): Promise<DriveFile> {
    const drivePath = checkPath(name)
    this.#assertParentsAreFolders(drivePath)
    if (this.#folders.has(drivePath))
      throw new EitriError('is_directory', `${drivePath} is a folder of the drive, not a file.`)
    const id = `sha256:${createHash('sha256').update(data).digest('hex')}`
    const oid = this.#history.store.write('blob', data)
    const line: CatalogLine = {
      op: 'write',
      path: drivePath,
      id,
      oid,
      size: data.byteLength,
      when: new Date().toISOString(),
    }
    await this.#record(line)
    return { path: drivePath, id, size: data.byteLength, when: line.when }
  }

  async read(name: string, options: { readonly version?: string } = {}): Promise<Uint8Array> {
    const drivePath = checkPath(name)
    if (options.version !== undefined) {
      const version = this.#versions
        .get(drivePath)
        ?.find((candidate) => candidate.id === options.version)
      if (version === undefined)
        throw new EitriError(
          'not_found',
          `${drivePath} never had a version ${options.version}; list them with versions.`,
        )
      return this.#content(version.oid)
    }
    const file = this.#files.get(drivePath)
    if (file === undefined) {
      throw new EitriError(
        this.#folders.has(drivePath) ? 'is_directory' : 'not_found',
        `No file ${drivePath} in the drive.`,
      )
    }
    return this.#content(file.oid)
  }

  async get(id: string): Promise<Uint8Array> {
    const found = this.#byId.get(id)
    if (found === undefined)
      throw new EitriError('not_found', `No content with id ${id} in the drive.`)
    return this.#content(found.oid)
  }

  async find(id: string): Promise<DriveFile | undefined> {
    const found = this.#byId.get(id)
    if (found === undefined) return undefined
    const { oid: _oid, ...file } = found
    return file
  }

  async list(folder: string): Promise<DriveEntry[]> {
    const drivePath = folder === '' || folder === '/' || folder === '.' ? '' : checkPath(folder)
    if (!this.#folders.has(drivePath))
      throw new EitriError('not_found', `No folder ${drivePath} in the drive.`)
    const prefix = drivePath === '' ? '' : `${drivePath}/`
    const isChild = (candidate: string): boolean =>
      candidate.startsWith(prefix) &&
      candidate !== drivePath &&
      !candidate.slice(prefix.length).includes('/')
    const folders = [...this.#folders]
      .filter(isChild)
      .map((child) => ({ type: 'folder' as const, name: child.slice(prefix.length) }))
    const files = [...this.#files.values()]
      .filter((file) => isChild(file.path))
      .map(({ oid: _oid, ...file }) => ({
        type: 'file' as const,
        name: file.path.slice(prefix.length),
        ...file,
      }))
    const byName = (a: { name: string }, b: { name: string }): number =>
      a.name < b.name ? -1 : a.name > b.name ? 1 : 0
    return [...folders.sort(byName), ...files.sort(byName)]
  }

  async versions(name: string): Promise<DriveFile[]> {
    return (this.#versions.get(checkPath(name)) ?? []).map(({ oid: _oid, ...file }) => file)
  }

  async stat(
    name: string,
  ): Promise<DriveFile | { readonly type: 'folder'; readonly path: string } | undefined> {
    const drivePath = name === '' ? '' : checkPath(name)
    if (this.#folders.has(drivePath)) return { type: 'folder', path: drivePath }
    const file = this.#files.get(drivePath)
    if (file === undefined) return undefined
    const { oid: _oid, ...rest } = file
    return rest
  }

  async makeFolder(name: string): Promise<void> {
    const drivePath = checkPath(name)
    if (this.#folders.has(drivePath)) return
    if (this.#files.has(drivePath))
      throw new EitriError('not_directory', `${drivePath} is a file of the drive.`)
    this.#assertParentsAreFolders(drivePath)
    await this.#record({ op: 'folder', path: drivePath, when: new Date().toISOString() })
  }

  async remove(name: string): Promise<void> {
    const drivePath = checkPath(name)
    if (this.#folders.has(drivePath)) {
      if ((await this.list(drivePath)).length > 0) {
        throw new EitriError(
          'invalid_input',
          `The folder ${drivePath} is not empty; remove what it holds first.`,
        )
      }
    } else if (!this.#files.has(drivePath)) {
      throw new EitriError('not_found', `No file or folder ${drivePath} in the drive.`)
    }
    await this.#record({ op: 'remove', path: drivePath, when: new Date().toISOString() })
  }

  /**
   * Writes the current files into a host folder (for the jail's /drive). The folder itself
   * stays (a jail may have it mounted); what it holds is replaced.
   */
  async materialize(folder: string): Promise<void> {
    fs.mkdirSync(folder, { recursive: true, mode: 0o755 })
    for (const entry of fs.readdirSync(folder))
      fs.rmSync(path.join(folder, entry), { recursive: true, force: true })
    for (const drivePath of [...this.#folders].filter((candidate) => candidate !== '').sort()) {
      fs.mkdirSync(path.join(folder, drivePath), { recursive: true, mode: 0o755 })
    }
    for (const file of this.#files.values()) {
      fs.writeFileSync(path.join(folder, file.path), await this.#content(file.oid), { mode: 0o444 })
    }
  }

  async #content(oid: string): Promise<Uint8Array> {
    return (await this.#history.store.require(oid)).content
  }

  async #record(line: CatalogLine): Promise<void> {
    appendStateLine(this.#catalog, line)
    this.#apply(line)
    await this.#commit(`${line.op} ${line.path}`)
    for (const listener of this.#listeners) listener()
  }

  #apply(line: CatalogLine): void {
    const ancestors = line.path.split('/').slice(0, -1)
    for (let index = 1; index <= ancestors.length; index++)
      this.#folders.add(ancestors.slice(0, index).join('/'))
    if (line.op === 'write') {
      const file: Current = {
        path: line.path,
        id: line.id,
        oid: line.oid,
        size: line.size,
        when: line.when,
      }
      this.#files.set(line.path, file)
      this.#versions.set(line.path, [...(this.#versions.get(line.path) ?? []), file])
      this.#byId.set(line.id, file)
    } else if (line.op === 'folder') {
      this.#folders.add(line.path)
    } else {
      this.#files.delete(line.path)
      this.#folders.delete(line.path)
    }
  }

  /** Records the drive's current tree as a commit, so plain git shows its history. */
  async #commit(message: string): Promise<void> {
    const tree = this.#writeFolder('')
    const previous = await this.#history.readRef(DRIVE_REF)
    if (previous !== undefined && (await this.#history.treeOf(previous)) === tree) return
    const commit = this.#history.commit(tree, previous === undefined ? [] : [previous], message)
    await this.#history.updateRef(DRIVE_REF, commit, previous)
  }

  #writeFolder(folder: string): string {
    const prefix = folder === '' ? '' : `${folder}/`
    const entries: TreeEntry[] = []
    for (const file of this.#files.values()) {
      const rest = file.path.slice(prefix.length)
      if (file.path.startsWith(prefix) && !rest.includes('/'))
        entries.push({ name: rest, kind: 'file', oid: file.oid })
    }
    for (const child of this.#folders) {
      const rest = child.slice(prefix.length)
      if (child !== folder && child.startsWith(prefix) && rest !== '' && !rest.includes('/')) {
        entries.push({ name: rest, kind: 'directory', oid: this.#writeFolder(child) })
      }
    }
    return this.#history.store.write('tree', encodeTree(entries))
  }

  #assertParentsAreFolders(drivePath: string): void {
    const parts = drivePath.split('/')
    for (let index = 1; index < parts.length; index++) {
      const ancestor = parts.slice(0, index).join('/')
      if (this.#files.has(ancestor))
        throw new EitriError(
          'not_directory',
          `Cannot use ${drivePath}: ${ancestor} is a file of the drive.`,
        )
    }
  }
}

/** A drive path: relative, `/`-separated, no empty, `.` or `..` parts, no NUL. */
function checkPath(name: string): string {
  const trimmed = name.replace(/^\/+/, '').replace(/\/+$/, '')
  const parts = trimmed.split('/')
  if (
    trimmed === '' ||
    trimmed.includes('\0') ||
    parts.some((part) => part === '' || part === '.' || part === '..')
  ) {
    throw new EitriError(
      'invalid_input',
      `${JSON.stringify(name)} is not a drive path: use names separated by /, without . or .. parts.`,
    )
  }
  return trimmed
}

/**
 * The catalog's lines; a last line a crash cut short is dropped.
 *
 * @throws EitriError `state_corrupt` naming the file and line of any other bad line.
 */
function readCatalog(file: string): CatalogLine[] {
  return readStateLines(file, catalogLineSchema, {
    what: 'the drive catalog',
    maxLineBytes: MAX_CATALOG_LINE_BYTES,
    fix: 'The drive cannot be opened from it: repair or remove that line (the content itself stays in the history, on refs/eitri/drive).',
  })
}
