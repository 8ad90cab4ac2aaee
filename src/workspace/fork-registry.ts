/**
 * @module workspace/fork-registry
 * The forks of a workspace on disk and how they are named and found: one folder each in the
 * state folder, holding its record (`fork.json`) and its write log, and one reference each in
 * the history; a fork is found by id or by name, and shown by {@link displayName}.
 */
import { randomBytes } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { z } from 'zod'
import { EitriError } from '../errors/eitri-error.ts'
import { inputExcerpt } from '../errors/input-excerpt.ts'
import { MAIN_LINE } from '../ports/line-control.ts'
import { describeIssues } from '../tool/validate-input.ts'
import { announceFork, ForkIndex } from './fork-index.ts'
import { PERSON, runOfWorld } from './fork-owner.ts'
import { writeDurablyAsync } from './durable-file.ts'
import { writeDurably } from './merge-journal.ts'

/** A fork as listed. */
export interface ForkInfo {
  readonly id: string
  /** For display only: access is decided by `owner`, never by a name. */
  readonly name?: string
  /**
   * Who made it: `person`, or the id of a session (an MCP connection, a Run). Over HTTP and
   * under `--isolate` a session reaches only the forks it owns and their descendants.
   */
  readonly owner: string
  /** The line it was forked from and merges into. */
  readonly parent: string
  /** The commit it was forked at (the base of its merges). */
  readonly forkPoint: string
  readonly created: string
  readonly readOnly: boolean
  readonly quotaBytes: number
  /** Set once merged: a merged fork is read-only; fork again to go on. */
  readonly merged?: { readonly into: string; readonly at: string }
  /**
   * Set once discarded: the record stays (without its files or history line) so listings can
   * say what became of it, until `eitri forks --prune`. Such a fork is reached by no door.
   */
  readonly discarded?: { readonly at: string; readonly changes: number }
}

/** A fork record is a few hundred bytes; anything much larger is not one. */
export const MAX_FORK_RECORD_BYTES = 64 * 1024

/** The pattern of fork ids (`f-` and 8 hex digits). */
export const FORK_ID = /^f-[0-9a-f]{8}$/

const forkRecordSchema = z.object({
  id: z.string().regex(FORK_ID, 'a fork id such as f-0123abcd'),
  name: z.string().min(1).max(64).optional(),
  // Records written before forks had owners were all made by the person's own tools.
  owner: z.string().min(1).max(128).default(PERSON),
  parent: z.string().min(1).max(64),
  forkPoint: z.string().regex(/^[0-9a-f]{40,64}$/, 'a commit id'),
  created: z.string().min(1).max(64),
  readOnly: z.boolean(),
  quotaBytes: z.number().int().nonnegative(),
  merged: z.object({ into: z.string().min(1).max(64), at: z.string().min(1).max(64) }).optional(),
  discarded: z
    .object({ at: z.string().min(1).max(64), changes: z.number().int().nonnegative() })
    .optional(),
})

/** What a fork's name may be: display only, so plain and short. */
export const FORK_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/

/** How a fork is shown in messages, commit messages and listings: its name, else its id. */
export function displayName(fork: {
  readonly id: string
  readonly name?: string | undefined
}): string {
  return fork.name ?? fork.id
}

/**
 * The refusal to discard `fork` while it has forks of its own; a Run's world among them goes
 * with its Run (cancelled while running, settled when kept for review), so the fix names it.
 */
export function forksBelowRefusal(fork: ForkInfo, children: readonly ForkInfo[]): EitriError {
  const runs = children.flatMap((child) => runOfWorld(child) ?? [])
  const held =
    runs.length === 0
      ? ''
      : ` Runs work or wait for review in ${runs.length === 1 ? 'one' : 'some'} (${runs.join(', ')}): cancel them (run_cancel) or settle them (run_settle, or \`eitri runs cancel|discard RUN\`) first.`
  return new EitriError(
    'invalid_input',
    `Fork ${displayName(fork)} has forks of its own (${children.map(displayName).join(', ')}); discard them first.${held}`,
  )
}

/** A display name from any text (a client's name): `Claude Code` → `claude-code`. */
export function forkLabel(text: string): string {
  const cleaned = text
    .toLowerCase()
    .replace(/[^a-z0-9._-]+/g, '-')
    .replace(/^[^a-z0-9]+/, '')
    .slice(0, 48)
    .replace(/[^a-z0-9]+$/, '')
  return cleaned === '' ? 'session' : cleaned
}

/** A fresh fork id (`f-` and 8 random hex digits). */
export function newForkId(): string {
  return `f-${randomBytes(4).toString('hex')}`
}

/**
 * The name a new fork gets: `name` when given (checked, and unique among `mine`, the forks its
 * maker sees: others' names are neither checked nor told), else LABEL-N from `label`, N the
 * first number no fork in `seen` uses (the forks its maker sees: a number counted past others'
 * forks would tell an isolated session how many sessions of its client there are), else none.
 *
 * @throws EitriError `invalid_input` for a malformed or taken name
 */
export function chooseForkName(
  options: { readonly name?: string | undefined; readonly label?: string | undefined },
  mine: readonly ForkInfo[],
  seen: readonly ForkInfo[],
): string | undefined {
  const { name, label } = options
  if (name !== undefined) {
    if (!FORK_NAME.test(name) || name === MAIN_LINE) {
      throw new EitriError(
        'invalid_input',
        `name must be letters, digits, ., _ and - (at most 64), and not "main" (got ${JSON.stringify(name)})`,
      )
    }
    // Doors look a fork up by id before name: a name shaped like an id would reach that fork.
    if (FORK_ID.test(name))
      throw new EitriError(
        'invalid_input',
        `name ${JSON.stringify(name)} looks like a fork id (f- and 8 hex digits), which names forks by id; choose a name of another shape.`,
      )
    if (mine.some((fork) => fork.name === name))
      throw new EitriError('invalid_input', `A fork is already named ${name}; choose another name.`)
    return name
  }
  if (label === undefined) return undefined
  const base = forkLabel(label)
  const taken = new Set(seen.map((fork) => fork.name))
  let counter = 1
  while (taken.has(`${base}-${counter}`)) counter += 1
  return `${base}-${counter}`
}

/**
 * The line named by id or name among `visible` (the forks a principal may act on); `main` for
 * main. A name is looked up only among `visible`, so no name can reach a fork left out of it,
 * and such a fork is answered exactly like one that does not exist.
 *
 * @throws EitriError `not_found`; `invalid_input` when a name is several forks' (name an id)
 */
export function findLine(
  visible: readonly ForkInfo[],
  idOrName: string,
): ForkInfo | typeof MAIN_LINE {
  if (idOrName === MAIN_LINE) return MAIN_LINE
  const byId = visible.find((candidate) => candidate.id === idOrName)
  if (byId !== undefined) return byId
  const named = visible.filter((candidate) => candidate.name === idOrName)
  if (named.length === 1) return named[0] as ForkInfo
  if (named.length > 1) {
    throw new EitriError(
      'invalid_input',
      `Several forks are named ${inputExcerpt(idOrName)} (${named.map((fork) => fork.id).join(', ')}): name one by its id.`,
    )
  }
  throw new EitriError(
    'not_found',
    `No fork named ${inputExcerpt(idOrName)}. Forks: ${visible.map(displayName).join(', ') || '(none)'}.`,
  )
}

/** The reference of a fork's line. */
export function forkRef(id: string): string {
  return `refs/eitri/forks/${id}`
}

/** The folder of a fork's record and write log. */
export function forkFolder(stateDir: string, id: string): string {
  return path.join(stateDir, 'forks', id)
}

/**
 * Every fork recorded, oldest first; discarded ones only when asked for. A folder without a
 * record (a removal a crash cut short) is skipped.
 *
 * @throws EitriError `state_corrupt` naming the record that cannot be read as one.
 */
export function readForks(stateDir: string, options: { discarded?: boolean } = {}): ForkInfo[] {
  return indexOf(stateDir)
    .list()
    .filter((record) => record.discarded === undefined || options.discarded === true)
    .sort((a, b) => a.created.localeCompare(b.created))
}

/**
 * What became of fork `id`, which no door reaches any more: discarded (its record says when)
 * or pruned (no record is left).
 */
export function forkFate(
  stateDir: string,
  id: string,
): { readonly name: string; readonly fate: string } {
  const record = readForks(stateDir, { discarded: true }).find((fork) => fork.id === id)
  return record?.discarded === undefined
    ? { name: record === undefined ? id : displayName(record), fate: 'was discarded and pruned' }
    : { name: displayName(record), fate: `was discarded at ${record.discarded.at}` }
}

/**
 * The open forks whose parent is `id` (a fork id or `main`), oldest first, without a listing:
 * what `readForks` would answer filtered by parent, each record read again.
 *
 * @throws EitriError `state_corrupt` as {@link readForks} does for those records.
 */
export function readChildForks(stateDir: string, id: string): ForkInfo[] {
  return indexOf(stateDir).children(id)
}

/**
 * The open forks named `name`, oldest first, without a listing, each record read again.
 *
 * @throws EitriError `state_corrupt` as {@link readForks} does for those records.
 */
export function readForksNamed(stateDir: string, name: string): ForkInfo[] {
  return indexOf(stateDir).named(name)
}

/** The index of each state folder's forks this process asked about. */
const indexes = new Map<string, ForkIndex<ForkInfo>>()

function indexOf(stateDir: string): ForkIndex<ForkInfo> {
  let index = indexes.get(stateDir)
  if (index === undefined) {
    index = new ForkIndex<ForkInfo>(
      stateDir,
      (id) => {
        const file = path.join(stateDir, 'forks', id, 'fork.json')
        return discardedRecords.get(file) ?? cachedForkRecord(file)
      },
      (text) => FORK_ID.test(text),
    )
    indexes.set(stateDir, index)
  }
  return index
}

/**
 * The open fork (not discarded) with id `id`, reading its record alone, or undefined when
 * there is none: what a listing would hold for that id, at a stat instead of one per fork.
 *
 * @throws EitriError `state_corrupt` as {@link readForks} does for that record.
 */
export function readForkById(stateDir: string, id: string): ForkInfo | undefined {
  if (!FORK_ID.test(id)) return undefined
  const file = path.join(forkFolder(stateDir, id), 'fork.json')
  if (discardedRecords.has(file)) return undefined
  const record = cachedForkRecord(file)
  return record?.discarded === undefined ? record : undefined
}

/** Writes a fork's record durably. */
export function writeFork(stateDir: string, info: ForkInfo): void {
  const file = path.join(forkFolder(stateDir, info.id), 'fork.json')
  // Only a new fork reuses a folder's name (a pruned one's, by a one-in-four-billion chance).
  discardedRecords.delete(file)
  writeDurably(file, info)
  announce(stateDir, info.id, info)
}

/**
 * Writes a fork's record durably as {@link writeFork} does, its syncs on the thread pool: the
 * records of many forks made or discarded at once are synced together.
 */
export async function writeForkAsync(stateDir: string, info: ForkInfo): Promise<void> {
  const file = path.join(forkFolder(stateDir, info.id), 'fork.json')
  discardedRecords.delete(file)
  await writeDurablyAsync(file, info)
  announce(stateDir, info.id, info)
}

/**
 * This process's index learns a record it wrote (undefined: removed) now; others from the line
 * in the change log, appended once the record is in place.
 */
function announce(stateDir: string, id: string, record: ForkInfo | undefined): void {
  const index = indexes.get(stateDir)
  index?.wrote(id, record)
  announceFork(stateDir, id)
  index?.announced(id)
}

/** Forgets the record of a fork whose folder is removed (a prune). */
export function forgetFork(stateDir: string, id: string): void {
  const file = path.join(forkFolder(stateDir, id), 'fork.json')
  discardedRecords.delete(file)
  recordCache.delete(file)
  announce(stateDir, id, undefined)
}

/**
 * The records read as discarded, by file. A discarded record is final: nothing rewrites it
 * (no door reaches a discarded fork) and it only goes away with its folder, which a listing
 * then no longer finds. So a listing takes it from here without a stat: with a Run leaving
 * one record each until a prune, a listing costs a stat per open fork, not per fork ever made.
 */
const discardedRecords = new Map<string, ForkInfo>()

/**
 * Records read before, by file, with the file's identity when read. A record is only ever
 * replaced whole (written beside it, then renamed over it) and each rewrite adds a field (merged,
 * discarded), so a file with the same inode, size and times holds what was read: a listing
 * costs a stat per fork, not a parse, and the records of discarded forks (Runs leave one each
 * until a prune) stay cheap. Anything else that touches the file makes it read again.
 */
const recordCache = new Map<string, { readonly identity: string; readonly record: ForkInfo }>()
/** Beyond this many cached records the cache starts over (a bound, not a policy). */
const MAX_CACHED_RECORDS = 100_000

/** One record (from the cache when its file is unchanged), or undefined when there is none. */
function cachedForkRecord(file: string): ForkInfo | undefined {
  let identity: string
  try {
    const stat = fs.lstatSync(file, { bigint: true })
    identity = `${stat.dev}:${stat.ino}:${stat.size}:${stat.ctimeNs}:${stat.mtimeNs}`
  } catch {
    recordCache.delete(file)
    return readForkRecord(file)
  }
  const cached = recordCache.get(file)
  if (cached?.identity === identity) return cached.record
  const record = readForkRecord(file)
  if (record === undefined) {
    recordCache.delete(file)
    return undefined
  }
  if (recordCache.size >= MAX_CACHED_RECORDS) recordCache.clear()
  recordCache.set(file, { identity, record: deepFreeze(record) })
  if (record.discarded !== undefined) {
    if (discardedRecords.size >= MAX_CACHED_RECORDS) discardedRecords.clear()
    discardedRecords.set(file, record)
  }
  return record
}

/** Cached records are shared by every listing: none may change one. */
function deepFreeze(record: ForkInfo): ForkInfo {
  if (record.merged !== undefined) Object.freeze(record.merged)
  if (record.discarded !== undefined) Object.freeze(record.discarded)
  return Object.freeze(record)
}

/** One record, or undefined when there is none. */
function readForkRecord(file: string): ForkInfo | undefined {
  let text: string
  try {
    const descriptor = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW)
    try {
      const { size } = fs.fstatSync(descriptor)
      if (size > MAX_FORK_RECORD_BYTES)
        throw damaged(file, `${size} bytes, more than ${MAX_FORK_RECORD_BYTES}`)
      text = fs.readFileSync(descriptor, 'utf8')
    } finally {
      fs.closeSync(descriptor)
    }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    if (EitriError.isInstance(error)) throw error
    throw damaged(file, (error as Error).message)
  }
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch (error) {
    throw damaged(file, `not JSON (${(error as Error).message})`)
  }
  const parsed = forkRecordSchema.safeParse(json)
  if (!parsed.success) throw damaged(file, describeIssues(parsed.error).replaceAll('\n', '; '))
  const { name, merged, discarded, ...record } = parsed.data
  if (path.basename(path.dirname(file)) !== record.id)
    throw damaged(file, `it names fork ${record.id}, not the folder it is in`)
  return {
    ...record,
    ...(name === undefined ? {} : { name }),
    ...(merged === undefined ? {} : { merged }),
    ...(discarded === undefined ? {} : { discarded }),
  }
}

function damaged(file: string, why: string): EitriError {
  return new EitriError(
    'state_corrupt',
    `eitri's record of a fork, ${file}, cannot be read: ${why}. Restore it, or move that fork's folder out of ${path.dirname(path.dirname(file))} to drop the fork.`,
  )
}
