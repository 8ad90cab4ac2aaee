/**
 * @module workspace/main-snapshots
 * Snapshots of main around every call that may change it: one before (so the call can be
 * undone) and one after (so what changes between one call's end and the next call's start is
 * known to be a person's, and a restore never silently undoes it). A snapshot costs what changed
 * since the last one (the watcher's paths and git's stat cache); when nothing changed it reuses
 * the last one's trees, and still records the call. Snapshots run in the queue of writers to
 * main, so none interleaves with a merge or a restore.
 */
import { randomBytes } from 'node:crypto'
import { EitriError } from '../errors/eitri-error.ts'
import type { SnapshotCall, SnapshotKind, SnapshotRecord } from './snapshot-record.ts'
import { MAX_LISTED_SKIPPED } from './snapshot-record.ts'
import { isListedSnapshot } from '../ports/line-control.ts'
import type { SnapshotLog } from './snapshot-log.ts'
import { encodeRefs, type RefsReading, type UserGitRefs } from './user-git-refs.ts'

/** Main as a snapshot sees it. */
export interface MainState {
  /** The tree of main's files. */
  readonly files: string
  /** Paths left out: over the size bound, nested repositories (`folder/`), refused by git. */
  readonly skipped: readonly string[]
  /** Whether anything under `.git` changed since the last look; undefined when unknown. */
  readonly gitTouched: boolean | undefined
}

/** How long snapshots are kept. */
export interface SnapshotRetention {
  /** The most snapshots kept (calls and opens; the snapshot after each call goes with it). */
  readonly keep: number
  /** Snapshots older than this are pruned, except the newest. */
  readonly maxAgeDays: number
}

/** What main-snapshots needs from the lines of the workspace. */
export interface MainSnapshotsOptions {
  readonly log: SnapshotLog
  readonly refs: UserGitRefs
  /** Runs `work` in the queue of writers to main. */
  readonly serialize: <T>(work: () => Promise<T>) => Promise<T>
  /** Brings main's snapshot up to date; called only inside the queue. */
  readonly takeMain: () => Promise<MainState>
}

interface Last {
  readonly contentTree: string
  readonly refsText: string | undefined
  readonly refsNote: string | undefined
}

/** The snapshots of main, taken around calls. */
export class MainSnapshots {
  /** This process's mark on its records: in-flight counts mean something only within one. */
  readonly owner = `p-${randomBytes(4).toString('hex')}`
  readonly log: SnapshotLog
  readonly #options: MainSnapshotsOptions
  #inFlight = 0
  #started: Promise<void> = Promise.resolve()
  #last: Last | undefined

  constructor(options: MainSnapshotsOptions) {
    this.#options = options
    this.log = options.log
  }

  /**
   * Takes the first snapshot in the background (recorded only if main changed since the last
   * one), then prunes by `retention`; the first call that may change main waits for it.
   */
  start(retention?: SnapshotRetention): void {
    this.#started = this.#options
      .serialize(() => this.#record('open'))
      .then(() => (retention === undefined ? undefined : this.prune(retention)))
      .then(
        () => undefined,
        () => undefined,
      )
  }

  /**
   * Runs `work` between a snapshot before it and one after it. If the snapshot before cannot
   * be taken, `work` does not run.
   *
   * @throws EitriError `tool_failed` when main could not be snapshotted (nothing ran).
   */
  async around<T>(
    call: SnapshotCall,
    work: () => Promise<T>,
    options: { outcome?: (value: T) => string } = {},
  ): Promise<T> {
    await this.#started
    try {
      await this.#options.serialize(async () => {
        this.#inFlight++
        try {
          await this.#record('before', call)
        } catch (error) {
          this.#inFlight--
          throw error
        }
      })
    } catch (error) {
      throw new EitriError(
        'tool_failed',
        `eitri could not snapshot the workspace before ${call.tool}, so it did not run and nothing changed: ${(error as Error).message}. Check that the disk has room and eitri's state folder is writable, then try again.`,
      )
    }
    let outcome = 'failed'
    try {
      const value = await work()
      outcome = options.outcome?.(value) ?? 'success'
      return value
    } finally {
      await this.#after(call, outcome)
    }
  }

  /**
   * Runs `work` (a person deciding on an approval during `call`) as time no call covers: what
   * changes meanwhile counts as the person's, so a restore will not silently undo it. Takes a
   * snapshot as the wait starts and one as it ends.
   */
  async aside<T>(call: SnapshotCall, work: () => Promise<T>): Promise<T> {
    await this.#options
      .serialize(async () => {
        this.#inFlight--
        await this.#record('after', {
          ...call,
          detail: `${call.detail ?? ''} (waiting for a person)`.trim(),
        })
      })
      .catch(() => undefined)
    try {
      return await work()
    } finally {
      await this.#options
        .serialize(async () => {
          this.#inFlight++
          await this.#record('before', call, undefined, { resumed: true })
        })
        .catch(() => undefined)
    }
  }

  /**
   * Counts `finished` as a call still changing main (a background job started by a call) until
   * it settles, then takes the snapshot after it.
   */
  hold(call: SnapshotCall, finished: Promise<unknown>): void {
    this.#inFlight++
    void finished.then(
      () => this.#after(call, 'finished'),
      () => this.#after(call, 'finished'),
    )
  }

  /** Settles once the first snapshot (and the pruning after it) is done. */
  settled(): Promise<void> {
    return this.#started
  }

  /** Reads the user's git references now. */
  readRefs(): RefsReading {
    return this.#options.refs.read()
  }

  /** Every snapshot, newest first. */
  list(): Promise<SnapshotRecord[]> {
    return this.log.list()
  }

  /**
   * Deletes the snapshots beyond `retention`: more than `keep`, or older than `maxAgeDays`
   * (the newest is always kept). Answers the numbers deleted.
   */
  async prune(retention: SnapshotRetention, now = Date.now()): Promise<number[]> {
    return this.#options.serialize(async () => {
      const records = await this.log.list()
      const points = records.filter(isListedSnapshot)
      const cutoff = now - retention.maxAgeDays * 24 * 60 * 60 * 1000
      const kept = points.filter(
        (record, index) =>
          index === 0 || (index < retention.keep && Date.parse(record.time) >= cutoff),
      )
      const oldestKept = Math.min(...kept.map((record) => record.id))
      const removed = records
        .filter((record) => record.id < oldestKept)
        .map((record) => record.id)
        .sort((a, b) => a - b)
      await this.log.remove(removed)
      return removed
    })
  }

  async #after(call: SnapshotCall, outcome: string): Promise<void> {
    // The call already happened: a snapshot that fails after it must not turn its result into
    // an error. The next snapshot records main again.
    await this.#options
      .serialize(async () => {
        this.#inFlight--
        await this.#record('after', call, outcome)
      })
      .catch(() => undefined)
  }

  /** Takes one snapshot; an `open` one only when main changed since the newest snapshot. */
  async #record(
    kind: SnapshotKind,
    call?: SnapshotCall,
    outcome?: string,
    options: { readonly resumed?: true } = {},
  ): Promise<SnapshotRecord | undefined> {
    const main = await this.#options.takeMain()
    let refsText: string | undefined
    let refsNote: string | undefined
    if (main.gitTouched === false && this.#last !== undefined) {
      refsText = this.#last.refsText
      refsNote = this.#last.refsNote
    } else {
      const reading = this.#options.refs.read()
      if (reading.type === 'recorded') refsText = encodeRefs(reading.refs)
      else refsNote = reading.reason
    }
    const contentTree = this.log.contentTree(main.files, refsText, main.skipped)
    const last = { contentTree, refsText, refsNote }
    if (kind === 'open') {
      const newest = this.#last?.contentTree ?? (await this.#newestContentTree())
      this.#last = last
      if (newest === contentTree) return undefined
    }
    const record = await this.log.append(
      {
        kind,
        time: new Date().toISOString(),
        ...(call === undefined ? {} : { call }),
        ...(outcome === undefined ? {} : { outcome }),
        ...(options.resumed === undefined ? {} : { resumed: options.resumed }),
        skipped: main.skipped.slice(0, MAX_LISTED_SKIPPED),
        skippedCount: main.skipped.length,
        ...(refsNote === undefined ? {} : { refsNote }),
        inFlight: this.#inFlight,
        owner: this.owner,
      },
      contentTree,
    )
    this.#last = last
    return record
  }

  async #newestContentTree(): Promise<string | undefined> {
    const newest = (await this.log.list())[0]
    return newest === undefined ? undefined : this.log.treeOf(newest)
  }
}
