/**
 * @module store/sqlite/sqlite-driver
 * The SQL driver on `node:sqlite`: one connection, WAL, write transactions begun IMMEDIATE so
 * two processes queue on the write lock instead of deadlocking, and retries while another
 * process holds it. Writes that wait at the same time share one commit (group commit), each in
 * its own savepoint. A commit returns with `synchronous=NORMAL` (no fsync on the main thread);
 * its writers hear success once `WalSync` has synced the log on the thread pool, while the next
 * group may already commit.
 */
import fs from 'node:fs'
import path from 'node:path'
import { DatabaseSync, type StatementSync } from 'node:sqlite'
import { EitriError } from '../../errors/eitri-error.ts'
import { retryOnContention, throwIfCancelled } from '../sql/contention.ts'
import type {
  SqlDriver,
  SqlRow,
  SqlTransaction,
  SqlValue,
  TransactionMode,
  TransactionOptions,
} from '../sql/sql-driver.ts'
import { SerialQueue } from '../../util/serial-queue.ts'
import { WalSync, type Datasync } from './wal-sync.ts'
import { storableParameters } from '../sql/storable-text.ts'

/**
 * The parameters as SQLite should see them: `node:sqlite` binds every JavaScript number as a
 * REAL, and a whole number is bound as an INTEGER here instead (as PostgreSQL takes it). An
 * ordinary table compares a REAL with an INTEGER column by value, but FTS5 ignores a `rowid = ?`
 * whose value is a REAL and answers the first match of the whole index: the snippet of one
 * line's search hit was read from whichever entry of any line (another connection's fork, a
 * discarded one) matched first (found 2026-12-03, w/atkgit).
 */
function bound(parameters: readonly SqlValue[]): (string | number | bigint | null)[] {
  return parameters.map((value) =>
    typeof value === 'number' && Number.isSafeInteger(value) ? BigInt(value) : value,
  )
}

/** How long SQLite itself waits on a lock before our retry loop takes over (it blocks). */
const BUSY_TIMEOUT_MS = 20
const SQLITE_BUSY = 5
const SQLITE_LOCKED = 6
const SQLITE_NOTADB = 26
const SQLITE_CANTOPEN = 14
const SQLITE_CORRUPT = 11

/** The primary result code of a node:sqlite error, if it is one. */
export function sqliteCode(error: unknown): number | undefined {
  const code = (error as { errcode?: unknown } | null)?.errcode
  return typeof code === 'number' ? code & 0xff : undefined
}

const isContention = (error: unknown): boolean => {
  const code = sqliteCode(error)
  return code === SQLITE_BUSY || code === SQLITE_LOCKED
}

/**
 * How long opening waits for another process that holds the file's lock: two eitri processes
 * opening a new store at once both switch it to WAL, which takes the lock for a moment, and a
 * loaded machine made the second one fail at once ("database is locked").
 */
const OPEN_WAIT_MS = 10_000

/**
 * Runs a step of opening until it is not refused for another process's lock, waiting a little
 * more each time (blocking: opening is synchronous), up to {@link OPEN_WAIT_MS}.
 */
function untilUnlocked<T>(step: () => T): T {
  const deadline = performance.now() + OPEN_WAIT_MS
  const pause = new Int32Array(new SharedArrayBuffer(4))
  for (let wait = 5; ; wait = Math.min(wait * 2, 200)) {
    try {
      return step()
    } catch (error) {
      if (!isContention(error) || performance.now() > deadline) throw error
      Atomics.wait(pause, 0, 0, wait)
    }
  }
}

/** How {@link openSqliteDriver} may be adjusted (for tests). */
export interface SqliteDriverOptions {
  /** Flushes the write-ahead log; tests slow it down or fail it. Default: `fdatasync`. */
  readonly datasync?: Datasync | undefined
}

/**
 * Opens (creating if needed) the database file at `file`, or `:memory:`.
 *
 * @throws EitriError `store_unavailable` naming what is wrong and how to fix it.
 */
export function openSqliteDriver(file: string, options: SqliteDriverOptions = {}): SqliteDriver {
  const location = file === ':memory:' ? 'sqlite::memory:' : `sqlite:${file}`
  let database: DatabaseSync | undefined
  let walSync: WalSync | undefined
  try {
    if (file !== ':memory:') fs.mkdirSync(path.dirname(file), { recursive: true, mode: 0o700 })
    const opened = new DatabaseSync(file, { timeout: BUSY_TIMEOUT_MS })
    database = opened
    // Reading the schema is the first touch of the file: a file that is not SQLite fails here.
    untilUnlocked(() => opened.exec('SELECT count(*) FROM sqlite_schema'))
    const mode =
      file === ':memory:'
        ? undefined
        : untilUnlocked(
            () => opened.prepare('PRAGMA journal_mode = WAL').get() as { journal_mode?: unknown },
          )
    if (mode?.journal_mode === 'wal') {
      // Commits skip their fsync; WalSync makes each durable before its writers hear. SQLite
      // still syncs the log before each checkpoint copies it into the database.
      database.exec('PRAGMA synchronous = NORMAL')
      walSync = new WalSync(`${file}-wal`, options.datasync)
    } else {
      // In memory (nothing to sync), or a file system where WAL is refused: every commit syncs.
      database.exec('PRAGMA synchronous = FULL')
    }
    database.exec('PRAGMA foreign_keys = ON')
  } catch (error) {
    database?.close()
    throw openFailure(file, error)
  }
  return new SqliteDriver(database, location, walSync)
}

function openFailure(file: string, error: unknown): EitriError {
  const code = sqliteCode(error)
  const detail = (error as Error).message
  if (code === SQLITE_NOTADB || code === SQLITE_CORRUPT) {
    return new EitriError(
      'store_unavailable',
      `${file} is not an SQLite database (${detail}). Move it aside, or choose another file with --store sqlite:PATH or EITRI_STORE.`,
      { cause: error },
    )
  }
  if (code === SQLITE_CANTOPEN || (error as NodeJS.ErrnoException).code !== undefined) {
    return new EitriError(
      'store_unavailable',
      `Cannot open the store file ${file} (${detail}). Check that its folder exists and is writable, or choose another file with --store sqlite:PATH.`,
      { cause: error },
    )
  }
  return new EitriError('store_unavailable', `Cannot open the store file ${file}: ${detail}`, {
    cause: error,
  })
}

/** At most this many writes share one commit (a bound on how long one group holds the lock). */
const MAX_GROUP = 256

/** A write transaction waiting for a group commit. */
interface GroupMember {
  readonly work: (transaction: SqlTransaction) => Promise<unknown>
  readonly signal: AbortSignal | undefined
  /** Hears at the commit, not after the sync (see `TransactionOptions.deferSync`). */
  readonly deferSync: boolean
  readonly resolve: (value: unknown) => void
  readonly reject: (error: unknown) => void
}

/** What one member of a group came to. */
type GroupOutcome =
  { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly error: unknown }

/** A `node:sqlite` connection as a SqlDriver. */
export class SqliteDriver implements SqlDriver {
  readonly dialect = 'sqlite' as const
  readonly location: string
  readonly #database: DatabaseSync
  readonly #statements = new Map<string, StatementSync>()
  /** One transaction at a time on this connection: later ones wait their turn. */
  readonly #queue = new SerialQueue()
  /** Write transactions waiting for the next group commit, in the order asked. */
  readonly #pending: GroupMember[] = []
  /** Syncs the log after each commit; undefined when commits sync themselves (`FULL`). */
  readonly #walSync: WalSync | undefined
  /** A commit whose sync nobody waited for happened since the last sync began. */
  #unsynced = false
  #closed = false

  constructor(database: DatabaseSync, location: string, walSync?: WalSync) {
    this.#database = database
    this.location = location
    this.#walSync = walSync
  }

  transaction<T>(
    mode: TransactionMode,
    work: (transaction: SqlTransaction) => Promise<T>,
    options: TransactionOptions = {},
  ): Promise<T> {
    if (mode === 'write') return this.#groupWrite(work, options.signal, options.deferSync === true)
    const run = async (): Promise<T> => {
      this.#assertOpen()
      return retryOnContention(() => this.#attempt(mode, work), isContention, {
        signal: options.signal,
        location: this.location,
      })
    }
    return this.#queue.run(run)
  }

  /**
   * Queues a write transaction to commit with the others waiting beside it: one commit (one
   * fsync) for every write that arrived while the previous one ran. Each runs in a savepoint of
   * the shared transaction, so one that throws is undone alone and fails alone; every caller
   * hears only once the shared commit is durable, as with a transaction of its own. A failure
   * waits for the sync too: it may rest on what another member of the group wrote.
   */
  #groupWrite<T>(
    work: (transaction: SqlTransaction) => Promise<T>,
    signal: AbortSignal | undefined,
    deferSync: boolean,
  ): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#pending.push({
        work,
        signal,
        deferSync,
        resolve: resolve as (value: unknown) => void,
        reject,
      })
      if (this.#pending.length === 1) {
        void this.#queue.run(() => this.#commitGroup())
      }
    })
  }

  /**
   * Commits the writes waiting now (at most {@link MAX_GROUP}) and returns, so the next group
   * may commit; each caller hears once the log's sync after this commit is done.
   */
  async #commitGroup(): Promise<void> {
    const group = this.#pending.splice(0, MAX_GROUP)
    // Those left over (or arriving from now on) wait for the next commit.
    if (this.#pending.length > 0) void this.#queue.run(() => this.#commitGroup())
    let outcomes: GroupOutcome[]
    try {
      this.#assertOpen()
      outcomes = await retryOnContention(() => this.#attemptGroup(group), isContention, {
        location: this.location,
      })
    } catch (error) {
      // Rolled back whole (or never begun): nothing of it is on disk to wait for.
      for (const member of group) member.reject(error)
      return
    }
    const settle = (): void => {
      for (const [index, member] of group.entries()) {
        const outcome = outcomes[index] as GroupOutcome
        if (outcome.ok) member.resolve(outcome.value)
        else member.reject(outcome.error)
      }
    }
    if (this.#walSync === undefined) {
      settle()
      return
    }
    if (group.every((member) => member.deferSync)) {
      // The next synced commit's sync covers it: the log is synced whole.
      this.#unsynced = true
      settle()
      return
    }
    this.#unsynced = false
    // Not awaited: the queue moves on to the next group while this one's sync runs.
    this.#walSync.durable().then(settle, (error: unknown) => {
      for (const member of group) member.reject(error)
    })
  }

  /**
   * One try of a group: every member in its savepoint, then one commit. A member alone needs
   * no savepoint (two statements fewer on a lone Run's every step): if it fails, the whole
   * transaction is rolled back, which undoes exactly what it wrote.
   */
  async #attemptGroup(group: readonly GroupMember[]): Promise<GroupOutcome[]> {
    const outcomes: GroupOutcome[] = []
    this.#database.exec('BEGIN IMMEDIATE')
    try {
      const alone = group.length === 1 ? group[0] : undefined
      if (alone !== undefined) return [await this.#attemptAlone(alone)]
      for (const member of group) {
        try {
          throwIfCancelled(member.signal)
        } catch (error) {
          outcomes.push({ ok: false, error })
          continue
        }
        this.#database.exec('SAVEPOINT group_member')
        try {
          const value = await member.work(this.#transaction())
          this.#database.exec('RELEASE group_member')
          outcomes.push({ ok: true, value })
        } catch (error) {
          // Contention, or an error that ended the whole transaction (a full disk), fails the
          // group: nothing of it is committed, so nobody may hear success.
          if (isContention(error) || !this.#database.isTransaction) throw error
          this.#database.exec('ROLLBACK TO group_member')
          this.#database.exec('RELEASE group_member')
          outcomes.push({ ok: false, error })
        }
      }
      this.#database.exec('COMMIT')
      return outcomes
    } catch (error) {
      if (this.#database.isTransaction) this.#database.exec('ROLLBACK')
      throw error
    }
  }

  /** The one member of a group, in the transaction `#attemptGroup` began; commits or rolls back. */
  async #attemptAlone(member: GroupMember): Promise<GroupOutcome> {
    let outcome: GroupOutcome
    try {
      throwIfCancelled(member.signal)
      outcome = { ok: true, value: await member.work(this.#transaction()) }
    } catch (error) {
      // As in a group: contention, or an error that ended the transaction, is the group's.
      if (isContention(error) || !this.#database.isTransaction) throw error
      this.#database.exec('ROLLBACK')
      return { ok: false, error }
    }
    this.#database.exec('COMMIT')
    return outcome
  }

  async #attempt<T>(
    mode: TransactionMode,
    work: (transaction: SqlTransaction) => Promise<T>,
  ): Promise<T> {
    this.#database.exec(mode === 'write' ? 'BEGIN IMMEDIATE' : 'BEGIN DEFERRED')
    try {
      const result = await work(this.#transaction())
      this.#database.exec('COMMIT')
      return result
    } catch (error) {
      if (this.#database.isTransaction) this.#database.exec('ROLLBACK')
      throw error
    }
  }

  #transaction(): SqlTransaction {
    return {
      dialect: 'sqlite',
      all: async <Row extends SqlRow>(sql: string, parameters: readonly SqlValue[] = []) =>
        this.#statement(sql).all(...bound(storableParameters(parameters))) as Row[],
      get: async <Row extends SqlRow>(sql: string, parameters: readonly SqlValue[] = []) =>
        this.#statement(sql).get(...bound(storableParameters(parameters))) as Row | undefined,
      run: async (sql: string, parameters: readonly SqlValue[] = []) =>
        Number(this.#statement(sql).run(...bound(storableParameters(parameters))).changes),
      nextSequences: async (count: number) => {
        const row = this.#statement(
          'UPDATE store_clock SET value = value + ? WHERE id = 1 RETURNING value',
        ).get(...bound([count])) as { value: number }
        return Array.from({ length: count }, (_, index) => row.value - count + 1 + index)
      },
    }
  }

  #statement(sql: string): StatementSync {
    let statement = this.#statements.get(sql)
    if (statement === undefined) {
      statement = this.#database.prepare(sql)
      this.#statements.set(sql, statement)
    }
    return statement
  }

  #assertOpen(): void {
    if (this.#closed) {
      throw new EitriError('not_available', `The store at ${this.location} is closed.`)
    }
    // After a failed sync what reached the disk is unknown: fail closed, reads included.
    const failure = this.#walSync?.failure
    if (failure !== undefined) throw failure
  }

  async close(): Promise<void> {
    if (this.#closed) return
    this.#closed = true
    await this.#queue.settled()
    // What was committed without a sync is synced before the store lets go of it.
    if (this.#unsynced) await this.#walSync?.durable().catch(() => undefined)
    // Writers committed before the close still hear, after their sync.
    await this.#walSync?.close()
    this.#statements.clear()
    this.#database.close()
  }
}
