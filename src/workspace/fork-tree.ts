/**
 * @module workspace/fork-tree
 * A fork's files: the tree of its last commit in eitri's history, plus what was written since
 * (an overlay kept in memory and in an append-only log beside it). Forking copies nothing;
 * a write stores one object and one log line.
 */
import { createHash } from 'node:crypto'
import fs from 'node:fs'
import { z } from 'zod'
import { EitriError } from '../errors/eitri-error.ts'
import { contentBytes, contentLength } from '../tool/file-content.ts'
import type { ContentSource, EntryStat, EntryType, ReadBounds } from '../ports/workspace-view.ts'
import { boundContent, type DirectoryEntry } from './directory-tree.ts'
import { encodeTree, parseTree, type TreeEntry, type TreeEntryKind } from './git/git-objects.ts'
import type { ObjectStore } from './git/object-store.ts'
import { objectIdSchema, relativePathSchema, timestampSchema } from './state-schemas.ts'
import type { WorkspaceTree } from './workspace-tree.ts'
import { appendStateLine, readStateLines } from './state-file.ts'

/** An entry the overlay holds: a blob, a folder, or a deletion. */
export type OverlayEntry =
  | {
      readonly kind: 'file' | 'executable' | 'symlink'
      readonly oid: string
      readonly size: number
    }
  /** `fresh`: made where nothing was (or after a deletion): the base tree's old entries stay hidden. */
  | { readonly kind: 'directory'; readonly fresh?: boolean }
  | { readonly kind: 'deleted' }

/** One line of a fork's write log. */
export interface WriteRecord {
  readonly path: string
  readonly entry: OverlayEntry
  readonly size: number
  readonly sha256?: string
  readonly who: string
  readonly when: string
}

const size = z.number().int().nonnegative()

/** A write log line, checked when read back: the log is in the state folder, a crash can cut it. */
const writeRecordSchema = z.strictObject({
  path: relativePathSchema,
  entry: z.discriminatedUnion('kind', [
    z.strictObject({
      kind: z.enum(['file', 'executable', 'symlink']),
      oid: objectIdSchema,
      size,
    }),
    z.strictObject({ kind: z.literal('directory'), fresh: z.boolean().exactOptional() }),
    z.strictObject({ kind: z.literal('deleted') }),
  ]),
  size,
  sha256: z
    .string()
    .regex(/^[0-9a-f]{64}$/)
    .exactOptional(),
  who: z.string().max(1000),
  when: timestampSchema,
}) satisfies z.ZodType<WriteRecord>

/** Longest line of a write log (a path is at most 4096 characters). */
const MAX_WRITE_LOG_LINE_BYTES = 64 * 1024

/** What a fork tree is built from. */
export interface ForkTreeOptions {
  readonly store: ObjectStore
  /** The tree of the fork's last commit. */
  readonly baseTree: string
  /** The append-only log of writes since that commit. */
  readonly logFile: string
  /** Who writes, for the log. */
  readonly who?: string
  /** Most bytes the fork may write in all. @default 1 GiB */
  readonly quotaBytes?: number
  /** Bytes already written (from earlier sessions). */
  readonly usedBytes?: number
  readonly readOnly?: boolean
  /** The time base entries report as modified. */
  readonly baseTime?: number
}

/** Default write quota of a fork. */
export const DEFAULT_FORK_QUOTA_BYTES = 1024 ** 3

/** The files of a fork. */
export class ForkTree implements WorkspaceTree {
  readonly root = undefined
  readonly #options: ForkTreeOptions
  readonly #overlay = new Map<string, OverlayEntry>()
  readonly #times = new Map<string, number>()
  /** Names the overlay holds directly under each folder. */
  readonly #children = new Map<string, Set<string>>()
  /** How many live (not deleted) overlay entries lie below each folder. */
  readonly #liveBelow = new Map<string, number>()
  #baseTree: string
  #usedBytes: number
  /** Tree objects parsed once: immutable, so never stale. */
  readonly #parsed = new Map<string, Map<string, TreeEntry>>()
  #frozen: string | undefined

  constructor(options: ForkTreeOptions) {
    this.#options = options
    this.#baseTree = options.baseTree
    this.#usedBytes = options.usedBytes ?? 0
    for (const record of readLog(options.logFile)) {
      this.#remember(record.path, record.entry)
      this.#times.set(record.path, Date.parse(record.when))
      this.#usedBytes += record.size
    }
  }

  /** Bytes written so far, counted against the quota. */
  get usedBytes(): number {
    return this.#usedBytes
  }

  /** When the newest write since the last commit was made; undefined when none was. */
  get newestWrite(): Date | undefined {
    let newest: number | undefined
    for (const time of this.#times.values())
      if (newest === undefined || time > newest) newest = time
    return newest === undefined ? undefined : new Date(newest)
  }

  /** True when nothing was written since the last commit. */
  get clean(): boolean {
    return this.#overlay.size === 0
  }

  async kind(relativePath: string): Promise<'symlink' | 'directory' | 'other' | undefined> {
    const entry = await this.#entry(relativePath)
    if (entry === undefined) return undefined
    return entry.kind === 'symlink' || entry.kind === 'directory' ? entry.kind : 'other'
  }

  async readlink(relativePath: string): Promise<string> {
    const entry = await this.#entry(relativePath)
    if (entry?.kind !== 'symlink' || entry.oid === undefined)
      throw new EitriError('not_found', `Not a link: ${relativePath}`)
    return (await this.#options.store.require(entry.oid)).content.toString('utf8')
  }

  async stat(relativePath: string): Promise<EntryStat | undefined> {
    const entry = await this.#entry(relativePath)
    if (entry === undefined) return undefined
    const modifiedMs = this.#times.get(relativePath) ?? this.#options.baseTime ?? 0
    if (entry.kind === 'directory') return { type: 'directory', size: 0, mode: 0o755, modifiedMs }
    const size = entry.size ?? (await this.#options.store.blobSize(entry.oid as string))
    return {
      type: typeOf(entry.kind),
      size,
      mode: entry.kind === 'executable' ? 0o755 : entry.kind === 'symlink' ? 0o777 : 0o644,
      modifiedMs,
    }
  }

  async modifiedMs(relativePath: string): Promise<number | undefined> {
    if ((await this.#entry(relativePath)) === undefined) return undefined
    return this.#times.get(relativePath) ?? this.#options.baseTime ?? 0
  }

  async signature(relativePath: string): Promise<string | undefined> {
    const entry = await this.#entry(relativePath)
    if (entry === undefined) return 'missing'
    return entry.kind === 'directory' ? 'd:493' : `${entry.kind}:${entry.oid ?? ''}`
  }

  async readFile(relativePath: string, bounds: ReadBounds = {}): Promise<Uint8Array> {
    const entry = await this.#entry(relativePath)
    if (entry === undefined) throw new EitriError('not_found', `File not found: ${relativePath}`)
    if (entry.kind === 'directory')
      throw new EitriError('is_directory', `Path is a directory, not a file: ${relativePath}`)
    // The object store gives a blob whole; a fork's blobs are bounded by its write quota. A
    // copy: the store keeps the blobs it read last for the next reader, whom a caller's change
    // in place must never reach.
    return Buffer.from(
      boundContent(
        (await this.#options.store.require(entry.oid as string)).content,
        relativePath,
        bounds,
      ),
    )
  }

  async list(relativePath: string): Promise<DirectoryEntry[]> {
    const names = new Map<string, EntryType>()
    const base = await this.#baseEntry(relativePath)
    if (base?.kind === 'directory' && !this.#shadowed(relativePath) && !this.#fresh(relativePath)) {
      for (const child of (await this.#treeChildren(base.oid)).values()) {
        names.set(child.name, typeOf(child.kind))
      }
    }
    const prefix = relativePath === '' ? '' : `${relativePath}/`
    for (const name of this.#children.get(relativePath) ?? []) {
      const resolved = await this.#entry(`${prefix}${name}`)
      if (resolved === undefined) names.delete(name)
      else names.set(name, typeOf(resolved.kind))
    }
    return [...names]
      .map(([name, type]) => ({ name, type }))
      .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0))
  }

  async writeFileAtomic(
    relativePath: string,
    content: Uint8Array | ContentSource,
    options: { mode?: number | undefined } = {},
  ): Promise<{ created: boolean }> {
    this.#assertWritable(contentLength(content))
    // A fork keeps whole objects: the caller bounds what it hands in pieces.
    const data = contentBytes(content)
    await this.#assertParentsAreFolders(relativePath)
    const existing = await this.#entry(relativePath)
    if (existing?.kind === 'directory')
      throw new EitriError('is_directory', `Path is a directory, not a file: ${relativePath}`)
    const executable =
      options.mode !== undefined ? (options.mode & 0o111) !== 0 : existing?.kind === 'executable'
    const oid = this.#options.store.write('blob', data)
    const sha256 = createHash('sha256').update(data).digest('hex')
    this.#record(
      relativePath,
      { kind: executable ? 'executable' : 'file', oid, size: data.byteLength },
      data.byteLength,
      sha256,
    )
    return { created: existing === undefined }
  }

  async makeFolder(relativePath: string): Promise<void> {
    this.#assertWritable(0)
    if (relativePath === '') return
    const existing = await this.#entry(relativePath)
    if (existing?.kind === 'directory') return
    if (existing !== undefined)
      throw new EitriError(
        'not_directory',
        `Cannot create ${relativePath}: it exists and is not a folder`,
      )
    await this.#assertParentsAreFolders(relativePath)
    this.#record(relativePath, { kind: 'directory', fresh: true }, 0)
  }

  async remove(relativePath: string): Promise<void> {
    this.#assertWritable(0)
    const existing = await this.#entry(relativePath)
    if (existing === undefined) return
    if (existing.kind === 'directory' && (await this.list(relativePath)).length > 0) {
      throw new EitriError(
        'invalid_input',
        `Cannot remove ${relativePath}: the folder is not empty; remove what it holds first`,
      )
    }
    this.#record(relativePath, { kind: 'deleted' }, 0)
  }

  async createSymlink(relativePath: string, target: string): Promise<void> {
    const data = Buffer.from(target, 'utf8')
    this.#assertWritable(data.byteLength)
    await this.#assertParentsAreFolders(relativePath)
    const oid = this.#options.store.write('blob', data)
    this.#record(relativePath, { kind: 'symlink', oid, size: data.byteLength }, data.byteLength)
  }

  /**
   * Writes the fork's current files as tree objects and answers the root tree's id. The
   * overlay stays until the caller commits and calls {@link rebase}.
   */
  async writeTree(): Promise<string> {
    return this.#writeFolder('')
  }

  /** Starts over from a new commit's tree: the log is emptied and the overlay cleared. */
  rebase(baseTree: string): void {
    this.#baseTree = baseTree
    this.#overlay.clear()
    this.#times.clear()
    this.#children.clear()
    this.#liveBelow.clear()
    fs.writeFileSync(this.#options.logFile, '')
  }

  /** The paths written since the last commit. */
  changedPaths(): string[] {
    return [...this.#overlay.keys()].sort()
  }

  /** The entries of a tree object, by name. */
  async #treeChildren(treeOid: string): Promise<Map<string, TreeEntry>> {
    let children = this.#parsed.get(treeOid)
    if (children === undefined) {
      children = new Map(
        parseTree((await this.#options.store.require(treeOid)).content).map((entry) => [
          entry.name,
          entry,
        ]),
      )
      this.#parsed.set(treeOid, children)
    }
    return children
  }

  async #writeFolder(relativePath: string): Promise<string> {
    // A folder nothing was written in since the last commit is its base tree, unchanged.
    if (
      !this.#children.has(relativePath) &&
      !this.#overlay.has(relativePath) &&
      !this.#shadowed(relativePath)
    ) {
      const base = await this.#baseEntry(relativePath)
      if (base?.kind === 'directory') return base.oid
    }
    const entries: TreeEntry[] = []
    for (const child of await this.list(relativePath)) {
      const path = relativePath === '' ? child.name : `${relativePath}/${child.name}`
      const entry = await this.#entry(path)
      if (entry === undefined) continue
      if (entry.kind === 'directory') {
        const oid = await this.#writeFolder(path)
        // git keeps no empty folders
        if ((await this.#options.store.require(oid)).content.length > 0)
          entries.push({ name: child.name, kind: 'directory', oid })
      } else {
        entries.push({ name: child.name, kind: entry.kind, oid: entry.oid as string })
      }
    }
    return this.#options.store.write('tree', encodeTree(entries))
  }

  /** The entry at a path: the overlay's, unless shadowed, else the base tree's. */
  async #entry(
    relativePath: string,
  ): Promise<{ kind: TreeEntryKind; oid?: string; size?: number } | undefined> {
    if (relativePath === '') return { kind: 'directory' }
    const own = this.#overlay.get(relativePath)
    if (own !== undefined) return own.kind === 'deleted' ? undefined : own
    if (this.#shadowed(relativePath))
      return this.#impliedFolder(relativePath) ? { kind: 'directory' } : undefined
    const base = await this.#baseEntry(relativePath)
    if (base !== undefined) return base
    return this.#impliedFolder(relativePath) ? { kind: 'directory' } : undefined
  }

  /** True when an ancestor was deleted, replaced by something not a folder, or made fresh. */
  #shadowed(relativePath: string): boolean {
    const parts = relativePath.split('/')
    for (let index = 1; index < parts.length; index++) {
      const ancestor = parts.slice(0, index).join('/')
      const entry = this.#overlay.get(ancestor)
      if (entry !== undefined && (entry.kind !== 'directory' || this.#fresh(ancestor))) return true
    }
    return false
  }

  #fresh(relativePath: string): boolean {
    const entry = this.#overlay.get(relativePath)
    return entry?.kind === 'directory' && entry.fresh === true
  }

  /** True when the overlay holds something below this path (which makes it a folder). */
  #impliedFolder(relativePath: string): boolean {
    return (this.#liveBelow.get(relativePath) ?? 0) > 0
  }

  /** Puts an entry in the overlay and keeps the folder indexes in step. */
  #remember(path: string, entry: OverlayEntry): void {
    const before = this.#overlay.get(path)
    const wasLive = before !== undefined && before.kind !== 'deleted'
    const isLive = entry.kind !== 'deleted'
    this.#overlay.set(path, entry)
    const parts = path.split('/')
    for (let index = 0; index < parts.length; index++) {
      const folder = parts.slice(0, index).join('/')
      const names = this.#children.get(folder) ?? new Set<string>()
      names.add(parts[index] as string)
      this.#children.set(folder, names)
      if (wasLive !== isLive) {
        this.#liveBelow.set(folder, (this.#liveBelow.get(folder) ?? 0) + (isLive ? 1 : -1))
      }
    }
  }

  async #baseEntry(relativePath: string): Promise<TreeEntry | undefined> {
    let tree = this.#baseTree
    let found: TreeEntry | undefined = { name: '', kind: 'directory', oid: tree }
    if (relativePath === '') return found
    for (const name of relativePath.split('/')) {
      if (found?.kind !== 'directory') return undefined
      tree = found.oid
      found = (await this.#treeChildren(tree)).get(name)
    }
    return found
  }

  async #assertParentsAreFolders(relativePath: string): Promise<void> {
    const parts = relativePath.split('/')
    for (let index = 1; index < parts.length; index++) {
      const ancestor = parts.slice(0, index).join('/')
      const entry = await this.#entry(ancestor)
      if (entry !== undefined && entry.kind !== 'directory') {
        throw new EitriError(
          'not_directory',
          `Cannot create ${relativePath}: ${ancestor} exists and is not a folder`,
        )
      }
      if (entry === undefined) this.#record(ancestor, { kind: 'directory', fresh: true }, 0)
    }
  }

  /** Makes the fork read-only from now on (it was merged), saying why in refusals. */
  freeze(reason: string): void {
    this.#frozen = reason
  }

  #assertWritable(bytes: number): void {
    if (this.#frozen !== undefined)
      throw new EitriError('read_only_access', `Refused: ${this.#frozen}`)
    if (this.#options.readOnly === true) {
      throw new EitriError(
        'read_only_access',
        'Refused: this fork is read-only; fork it again to make changes.',
      )
    }
    const quota = this.#options.quotaBytes ?? DEFAULT_FORK_QUOTA_BYTES
    if (this.#usedBytes + bytes > quota) {
      throw new EitriError(
        'quota_exceeded',
        `Refused: this fork's write quota is ${quota} bytes and it has written ${this.#usedBytes}; this write of ${bytes} bytes would exceed it. Merge or discard the fork, or write less.`,
      )
    }
  }

  #record(path: string, entry: OverlayEntry, size: number, sha256?: string): void {
    const record: WriteRecord = {
      path,
      entry,
      size,
      ...(sha256 === undefined ? {} : { sha256 }),
      who: this.#options.who ?? 'eitri',
      when: new Date().toISOString(),
    }
    appendStateLine(this.#options.logFile, record)
    this.#remember(path, entry)
    this.#times.set(path, Date.parse(record.when))
    this.#usedBytes += size
  }
}

/**
 * The records of a write log; a last line a crash cut short is dropped.
 *
 * @throws EitriError `state_corrupt` naming the file and line of any other bad line.
 */
export function readLog(logFile: string): WriteRecord[] {
  return readStateLines(logFile, writeRecordSchema, {
    what: 'the fork write log',
    maxLineBytes: MAX_WRITE_LOG_LINE_BYTES,
    fix: "The fork's writes since its last commit cannot be read back: repair or remove that line, or throw the fork away with `eitri discard`.",
  })
}

function typeOf(kind: TreeEntryKind): EntryType {
  return kind === 'directory'
    ? 'directory'
    : kind === 'symlink'
      ? 'symlink'
      : kind === 'gitlink'
        ? 'other'
        : 'file'
}
