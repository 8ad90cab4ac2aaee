/**
 * @module workspace/merge-journal
 * How a merge reaches the user's live files without ever leaving them half merged: the whole
 * plan (every path, its content before and after) is written and flushed first; then each file
 * is replaced atomically; then main's history moves and the journal goes. A crash after the
 * journal is durable is finished at the next open (replayed: wholly after); a crash before it
 * left every file untouched (wholly before).
 */
import { randomBytes } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { z } from 'zod'
import { EitriError } from '../errors/eitri-error.ts'
import { readStateJson } from './state-file.ts'
import type { DirectoryTree } from './directory-tree.ts'
import { encodeObject } from './git/git-objects.ts'
import type { ObjectStore } from './git/object-store.ts'
import { objectIdSchema, relativePathSchema } from './state-schemas.ts'
import type { TreeChange } from './tree-merge.ts'
import type { ConflictSide } from './tree-merge.ts'
import { isReferenceName, type RefMove } from './user-git-refs.ts'

/** A reference's value as a journal keeps it: a commit id, or `ref: NAME` for a symbolic one. */
const refValueSchema = z
  .string()
  .max(4200)
  .regex(/^(?:[0-9a-f]{40}|[0-9a-f]{64}|ref: (?:refs\/\S+|HEAD))$/, 'a commit id or ref: NAME')

/** One path the merge changes. */
export interface JournalEntry {
  readonly path: string
  readonly before?: ConflictSide
  readonly after?: ConflictSide
}

/** The plan of a merge into main (or of an undo or a restore, which change main the same way). */
export interface MergeJournal {
  readonly id: string
  readonly kind: 'merge' | 'undo' | 'restore'
  /** The fork merged (for a merge). */
  readonly fork?: string
  /** The snapshot restored (for a restore). */
  readonly snapshot?: number
  /** The user's git references a restore moves back once the files are in place. */
  readonly refs?: readonly RefMove[]
  /** The commit main moves to once every file is in place. */
  readonly commit: string
  /** The commit main was at when the merge started. */
  readonly previous: string
  readonly entries: readonly JournalEntry[]
}

const sideSchema = z.strictObject({
  oid: objectIdSchema,
  kind: z.enum(['file', 'executable', 'symlink', 'directory', 'gitlink']),
})

/** A journal read back: its paths are written in the user's folder, so each is checked. */
const mergeJournalSchema = z.strictObject({
  id: z.string().max(100),
  kind: z.enum(['merge', 'undo', 'restore']),
  fork: z.string().max(200).exactOptional(),
  snapshot: z.number().int().nonnegative().exactOptional(),
  refs: z
    .array(
      z.strictObject({
        name: z.string().max(4096).refine(isReferenceName, 'a git reference name'),
        from: refValueSchema.exactOptional(),
        to: refValueSchema,
      }),
    )
    .exactOptional(),
  // An undo has no commit to move to.
  commit: z.union([objectIdSchema, z.literal('')]),
  previous: z.union([objectIdSchema, z.literal('')]),
  entries: z.array(
    z.strictObject({
      path: relativePathSchema,
      before: sideSchema.exactOptional(),
      after: sideSchema.exactOptional(),
    }),
  ),
}) satisfies z.ZodType<MergeJournal>

/** Largest journal read back (a merge of a few hundred thousand paths). */
const MAX_JOURNAL_BYTES = 256 * 1024 * 1024

/**
 * The journal a merge left at `file` (the one in progress, or the record of the last merge);
 * undefined when there is none.
 *
 * @throws EitriError `state_corrupt` naming the file when it is not a valid journal.
 */
export function readMergeJournal(
  file: string,
  role: 'in-progress' | 'last-merge',
): MergeJournal | undefined {
  return readStateJson(file, mergeJournalSchema, {
    what: role === 'in-progress' ? 'the merge journal' : 'the record of the last merge',
    maxBytes: MAX_JOURNAL_BYTES,
    fix:
      role === 'in-progress'
        ? 'A merge into main was cut short and cannot be finished from it: check the files of main by hand (eitri keeps their history), then move the file aside to open the workspace.'
        : 'The last merge cannot be undone from it: move the file aside (nothing else depends on it).',
  })
}

/** Steps a test can stop a merge at, to prove a crash there leaves main whole. */
export type MergeStep =
  'planned' | 'journal-written' | `file-written:${number}` | 'files-written' | 'ref-moved'

/** Writes a JSON file atomically and durably: temp file, flush, rename, flush the folder. */
export function writeDurably(file: string, value: unknown): void {
  fs.mkdirSync(path.dirname(file), { recursive: true })
  const temporary = `${file}.${randomBytes(6).toString('hex')}.tmp`
  const descriptor = fs.openSync(temporary, 'wx', 0o600)
  try {
    fs.writeSync(descriptor, JSON.stringify(value))
    fs.fsyncSync(descriptor)
  } finally {
    fs.closeSync(descriptor)
  }
  fs.renameSync(temporary, file)
  const folder = fs.openSync(path.dirname(file), 'r')
  try {
    fs.fsyncSync(folder)
  } finally {
    fs.closeSync(folder)
  }
}

/** The git object id of what is at `relativePath` in the live folder now (undefined: nothing). */
export async function liveObjectId(
  tree: DirectoryTree,
  relativePath: string,
): Promise<string | undefined> {
  const stat = tree.statNow(relativePath)
  if (stat === undefined) return undefined
  if (stat.type === 'symlink')
    return encodeObject('blob', Buffer.from(await tree.readlink(relativePath))).oid
  if (stat.type !== 'file') return 'not-a-file'
  return encodeObject('blob', await tree.readFile(relativePath)).oid
}

/** The paths whose live content is no longer what the merge expects to replace. */
export async function changedSince(
  tree: DirectoryTree,
  entries: readonly JournalEntry[],
): Promise<string[]> {
  const changed: string[] = []
  for (const entry of entries) {
    const live = await liveObjectId(tree, entry.path)
    if (live !== entry.before?.oid) changed.push(entry.path)
  }
  return changed
}

/** Puts every entry's `after` in the live folder. Idempotent: a replay redoes what is done. */
export async function applyEntries(
  tree: DirectoryTree,
  store: ObjectStore,
  entries: readonly JournalEntry[],
  onStep?: (step: MergeStep) => void,
): Promise<void> {
  for (const [index, entry] of entries.entries()) {
    const after = entry.after
    if (after === undefined) {
      await tree.remove(entry.path).catch((error: unknown) => {
        if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
      })
    } else if (after.kind === 'symlink') {
      await tree.createSymlink(
        entry.path,
        (await store.require(after.oid)).content.toString('utf8'),
      )
    } else if (after.kind === 'file' || after.kind === 'executable') {
      const content = (await store.require(after.oid)).content
      await tree.writeFileAtomic(entry.path, content, {
        mode: after.kind === 'executable' ? 0o755 : 0o644,
      })
    } else {
      throw new EitriError(
        'tool_failed',
        `Cannot merge ${entry.path}: a ${after.kind} entry cannot be written to the folder.`,
      )
    }
    onStep?.(`file-written:${index}`)
  }
  await removeEmptyFolders(tree, entries)
}

/** Folders left empty by deletions go too, as git would leave them out. */
async function removeEmptyFolders(
  tree: DirectoryTree,
  entries: readonly JournalEntry[],
): Promise<void> {
  const folders = new Set<string>()
  for (const entry of entries) {
    if (entry.after !== undefined) continue
    for (
      let folder = path.posix.dirname(entry.path);
      folder !== '.';
      folder = path.posix.dirname(folder)
    )
      folders.add(folder)
  }
  for (const folder of [...folders].sort((a, b) => b.length - a.length)) {
    const stat = tree.statNow(folder)
    if (stat?.type === 'directory' && (await tree.list(folder)).length === 0)
      await tree.remove(folder)
  }
}

/**
 * Removes the temporary files a killed write left beside the journal's paths
 * (`.NAME.eitri-XXXX.tmp`), so a crash leaves nothing of itself in the user's folder.
 */
export async function removeStaleTemporaries(
  tree: DirectoryTree,
  entries: readonly JournalEntry[],
): Promise<void> {
  const byFolder = new Map<string, Set<string>>()
  for (const entry of entries) {
    const folder = path.posix.dirname(entry.path) === '.' ? '' : path.posix.dirname(entry.path)
    const names = byFolder.get(folder) ?? new Set<string>()
    names.add(path.posix.basename(entry.path))
    byFolder.set(folder, names)
  }
  for (const [folder, names] of byFolder) {
    if (tree.statNow(folder)?.type !== 'directory') continue
    for (const entry of await tree.list(folder)) {
      const match = /^\.(.+)\.eitri-[0-9a-f]{12}\.tmp$/.exec(entry.name)
      if (match?.[1] !== undefined && names.has(match[1]) && entry.type === 'file') {
        await tree.remove(folder === '' ? entry.name : `${folder}/${entry.name}`)
      }
    }
  }
}

/** A tree change as the journal records it. */
export function journalEntryOf(change: TreeChange): JournalEntry {
  return {
    path: change.path,
    ...(change.before === undefined ? {} : { before: change.before }),
    ...(change.after === undefined ? {} : { after: change.after }),
  }
}
