/**
 * @module workspace/fork-index
 * Which forks have which parent and which name, kept in memory so that forking and discarding
 * ask about a few records instead of listing every fork. Every process that writes a record
 * announces its id in a change log beside the records (one appended line); an index replays
 * the lines it has not seen at each question, so a fork another process made or rewrote is
 * known at once. What a log cannot tell (a record edited by hand, a writer that crashed between
 * its record and its line, an older eitri) is caught by a full listing, which every question
 * makes again once the last is {@link forkRescan} old. The index only names candidates:
 * each is read again (its record's stat) before it is answered.
 */
import fs from 'node:fs'
import path from 'node:path'
import { performance } from 'node:perf_hooks'

/**
 * How old the last full listing may be before a question lists every fork again, in ms: what
 * bounds how long a record no line announced stays unknown. Tests change it.
 */
export const forkRescan = { afterMs: 2000 }

/** Beyond this size the change log starts over (at a full listing, which makes it unneeded). */
const MAX_CHANGE_LOG_BYTES = 1024 * 1024

/** Beyond this many unreplayed lines of its own an index forgets them (a bound, not a policy). */
const MAX_OWN_LINES = 100_000

/** The change log: outside `forks/`, whose every entry is read as a fork's folder. */
export function forkChangeLog(stateDir: string): string {
  return path.join(stateDir, 'fork-changes.log')
}

/**
 * Says that the record of fork `id` was written or removed: one line, appended at once.
 *
 * Not synced, and need not be: the log only tells a running process what changed since its
 * own last full listing. A power cut that loses lines (or leaves a torn one, which is no id
 * and is skipped) ends every process that read them, and each process starts with a full
 * listing, which reads the records themselves (synced before their line is written). A
 * process killed alone loses nothing: its lines are in the page cache, seen by the others.
 * So a sync here would cost a hire a third sync and protect nothing.
 */
export function announceFork(stateDir: string, id: string): void {
  const descriptor = fs.openSync(
    forkChangeLog(stateDir),
    fs.constants.O_WRONLY | fs.constants.O_APPEND | fs.constants.O_CREAT | fs.constants.O_NOFOLLOW,
    0o600,
  )
  try {
    // One short write with O_APPEND: lines of processes writing at once never interleave.
    fs.writeSync(descriptor, `${id}\n`)
  } finally {
    fs.closeSync(descriptor)
  }
}

let fullListings = 0
let linesReplayed = 0

/**
 * How many lines of the change log made this process read a record again: lines of other
 * processes; its own are skipped (see {@link ForkIndex.announced}).
 */
export function forkLinesReplayed(): number {
  return linesReplayed
}

/** How many full listings of fork records this process made (each reads every record's stat). */
export function forkListings(): number {
  return fullListings
}

/** What the index needs of a fork's record (the registry's `ForkInfo`). */
export interface IndexedFork {
  readonly id: string
  readonly parent: string
  readonly name?: string | undefined
  /** When it was made: listings are oldest first. */
  readonly created: string
  readonly discarded?: unknown
}

/** The index of one state folder's forks. */
export class ForkIndex<ForkInfo extends IndexedFork> {
  readonly #stateDir: string
  /** Reads one record (undefined: none), from its stat when unchanged. */
  readonly #read: (id: string) => ForkInfo | undefined
  /** Whether a line of the change log is a fork id (anything else in it is ignored). */
  readonly #isId: (text: string) => boolean
  readonly #records = new Map<string, ForkInfo>()
  readonly #byParent = new Map<string, Set<string>>()
  readonly #byName = new Map<string, Set<string>>()
  /** The change log read up to here (its identity: a log started over is another file). */
  #logIdentity = ''
  #logOffset = 0
  #listedAt = Number.NEGATIVE_INFINITY
  /** Lines this process appended and has not replayed yet, by fork id: it knows them already. */
  readonly #own = new Map<string, number>()

  constructor(
    stateDir: string,
    read: (id: string) => ForkInfo | undefined,
    isId: (text: string) => boolean,
  ) {
    this.#stateDir = stateDir
    this.#read = read
    this.#isId = isId
  }

  /**
   * Every record, read (each record's stat, or its contents when changed): the index starts
   * over from it. The change log's position is taken first, so a record written during the
   * listing is announced after that position and read again at the next question.
   *
   * @throws EitriError `state_corrupt` for a record that cannot be read as one.
   */
  list(): ForkInfo[] {
    fullListings += 1
    const log = forkChangeLog(this.#stateDir)
    let stat = statOf(log)
    if (stat !== undefined && stat.size > MAX_CHANGE_LOG_BYTES) {
      // Started over as a new file: every index sees another identity and lists again.
      const fresh = `${log}.${process.pid}.tmp`
      let written = false
      try {
        fs.writeFileSync(fresh, '', { mode: 0o600 })
        written = true
        fs.renameSync(fresh, log)
      } catch {
        // A state folder this process may only read: the log stays long, and still right.
        if (written) fs.rmSync(fresh, { force: true })
      }
      stat = statOf(log)
    }
    this.#logIdentity = stat === undefined ? '' : stat.identity
    this.#logOffset = stat?.size ?? 0
    // Every line so far lies before the offset: none is replayed.
    this.#own.clear()
    this.#listedAt = performance.now()
    const records = fs.readdirSync(path.join(this.#stateDir, 'forks')).flatMap((id) => {
      const record = this.#read(id)
      return record === undefined ? [] : [record]
    })
    this.#records.clear()
    this.#byParent.clear()
    this.#byName.clear()
    for (const record of records) this.#put(record.id, record)
    return records
  }

  /** The open forks whose parent is `id`, read again. */
  children(id: string): ForkInfo[] {
    this.#refresh()
    return this.#open(this.#byParent.get(id))
  }

  /** The open forks named `name`, read again. */
  named(name: string): ForkInfo[] {
    this.#refresh()
    return this.#open(this.#byName.get(name))
  }

  /** Takes a record this process wrote (or removed: undefined) at once, before its line. */
  wrote(id: string, record: ForkInfo | undefined): void {
    this.#put(id, record)
  }

  /**
   * Says this process appended a line for `id` (after {@link wrote}, with no question between):
   * replaying it would only read again the record it just wrote, so one line for `id` is
   * skipped. Should another process's line for `id` be the one skipped, this process's own
   * line, already in the log, is in the same replay or an earlier one, and is read instead:
   * the record is read after both lines were written either way.
   */
  announced(id: string): void {
    // A bound, for a process that writes and never asks: forgotten lines are only read again.
    if (this.#own.size >= MAX_OWN_LINES) this.#own.clear()
    this.#own.set(id, (this.#own.get(id) ?? 0) + 1)
  }

  #open(ids: ReadonlySet<string> | undefined): ForkInfo[] {
    const found: ForkInfo[] = []
    for (const id of [...(ids ?? [])]) {
      const record = this.#read(id)
      this.#put(id, record)
      if (record !== undefined && record.discarded === undefined) found.push(record)
    }
    return found.sort((a, b) => a.created.localeCompare(b.created))
  }

  /** Brings the index up to date: the change log's new lines, or a full listing when due. */
  #refresh(): void {
    if (performance.now() - this.#listedAt >= forkRescan.afterMs) {
      this.list()
      return
    }
    const stat = statOf(forkChangeLog(this.#stateDir))
    const identity = stat?.identity ?? ''
    const size = stat?.size ?? 0
    if (identity !== this.#logIdentity || size < this.#logOffset) {
      this.list()
      return
    }
    if (size === this.#logOffset) return
    const bytes = Buffer.alloc(size - this.#logOffset)
    const descriptor = fs.openSync(
      forkChangeLog(this.#stateDir),
      fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW,
    )
    let read: number
    try {
      read = fs.readSync(descriptor, bytes, 0, bytes.length, this.#logOffset)
    } finally {
      fs.closeSync(descriptor)
    }
    const text = bytes.subarray(0, read).toString('utf8')
    // Only whole lines: a line being appended is read at the next question.
    const end = text.lastIndexOf('\n') + 1
    this.#logOffset += Buffer.byteLength(text.slice(0, end))
    const lines = new Map<string, number>()
    for (const id of text.slice(0, end).split('\n'))
      if (this.#isId(id)) lines.set(id, (lines.get(id) ?? 0) + 1)
    for (const [id, count] of lines) {
      const own = this.#own.get(id) ?? 0
      if (own > count) this.#own.set(id, own - count)
      else this.#own.delete(id)
      if (count > own) {
        linesReplayed += 1
        this.#put(id, this.#read(id))
      }
    }
  }

  /** Indexes an open record (a discarded one is final, and never a candidate again). */
  #put(id: string, record: ForkInfo | undefined): void {
    const before = this.#records.get(id)
    if (before !== undefined) {
      remove(this.#byParent, before.parent, id)
      if (before.name !== undefined) remove(this.#byName, before.name, id)
      this.#records.delete(id)
    }
    if (record === undefined || record.discarded !== undefined) return
    this.#records.set(id, record)
    add(this.#byParent, record.parent, id)
    if (record.name !== undefined) add(this.#byName, record.name, id)
  }
}

function add(map: Map<string, Set<string>>, key: string, id: string): void {
  const ids = map.get(key)
  if (ids === undefined) map.set(key, new Set([id]))
  else ids.add(id)
}

function remove(map: Map<string, Set<string>>, key: string, id: string): void {
  const ids = map.get(key)
  ids?.delete(id)
  if (ids?.size === 0) map.delete(key)
}

function statOf(file: string): { identity: string; size: number } | undefined {
  try {
    const stat = fs.statSync(file)
    return { identity: `${stat.dev}:${stat.ino}`, size: stat.size }
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw error
  }
}
