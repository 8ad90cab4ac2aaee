/**
 * @module store/sql/sql-driver
 * What the store's SQL needs from a database: transactions, statements with `?` parameters,
 * and a counter. SQLite and PostgreSQL each implement it; the store's logic is written once
 * against it, so both backends behave the same.
 */
import type { StoreBackend } from '../store.ts'

/** A value a statement takes or gives. Booleans are stored as 0 and 1. */
export type SqlValue = string | number | null

/** A row as read. */
export type SqlRow = Record<string, SqlValue>

/** Statements inside one transaction. */
export interface SqlTransaction {
  readonly dialect: StoreBackend
  all<Row extends SqlRow = SqlRow>(sql: string, parameters?: readonly SqlValue[]): Promise<Row[]>
  get<Row extends SqlRow = SqlRow>(
    sql: string,
    parameters?: readonly SqlValue[],
  ): Promise<Row | undefined>
  /** Runs a statement; answers how many rows it changed. */
  run(sql: string, parameters?: readonly SqlValue[]): Promise<number>
  /** `count` fresh, increasing values of the store-wide sequence. */
  nextSequences(count: number): Promise<number[]>
}

/** How a transaction will use the database. */
export type TransactionMode = 'read' | 'write'

/** How a transaction is run and when its caller hears. */
export interface TransactionOptions {
  readonly signal?: AbortSignal | undefined
  /**
   * A write whose caller hears once it is committed, before it is synced: it survives the
   * process being killed, not a power loss until the next synced commit (on SQLite's log and
   * PostgreSQL's alike, a later commit made durable makes every earlier one durable). For a
   * record nothing outside depends on before the next synced write (a Run's `started`).
   */
  readonly deferSync?: boolean | undefined
}

/** A connection (or pool) to one database. */
export interface SqlDriver {
  readonly dialect: StoreBackend
  /** Where it is, safe to print. */
  readonly location: string
  /**
   * Runs `work` in a transaction and commits it durably, or rolls back if it throws. Retried
   * from the start when the database reports contention (busy, serialization, deadlock), so
   * `work` must have no effect outside the transaction.
   */
  transaction<T>(
    mode: TransactionMode,
    work: (transaction: SqlTransaction) => Promise<T>,
    options?: TransactionOptions,
  ): Promise<T>
  close(): Promise<void>
}
