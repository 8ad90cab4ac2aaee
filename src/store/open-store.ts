/**
 * @module store/open-store
 * Opens the store a URL names. PostgreSQL's client is loaded only when a PostgreSQL URL is
 * given, so the default path never pays for it.
 */
import type { SqlDriver } from './sql/sql-driver.ts'
import { openSqlStore } from './sql/sql-store.ts'
import { openSqliteDriver } from './sqlite/sqlite-driver.ts'
import type { Store } from './store.ts'
import { storeDependencies, type StoreDependencies } from './store-dependencies.ts'
import { parseStoreUrl } from './store-url.ts'

/** Options of `openStore`. */
export interface OpenStoreOptions {
  /** The clock and ids, for tests. */
  readonly dependencies?: Partial<StoreDependencies>
  /** Where a relative SQLite path starts. @default the process's working directory */
  readonly cwd?: string
}

/**
 * Opens (creating and migrating as needed) the store at `url`: `sqlite:PATH`,
 * `sqlite::memory:` or `postgres://…`. Nothing stays open when it fails.
 *
 * @throws EitriError `config_invalid` for a malformed URL; `store_unavailable` when the store
 *   cannot be opened (not a database, server unreachable, newer schema), saying how to fix it.
 * @example
 * await using store = await openStore('postgres://eitri@db.internal/eitri')
 * const runs = await store.listRuns({ status: 'running' })
 */
export async function openStore(url: string, options: OpenStoreOptions = {}): Promise<Store> {
  const driver = await openDriver(url, options.cwd)
  return openSqlStore(driver, storeDependencies(options.dependencies))
}

/** The bare SQL driver for `url`, not migrated (for migrations' own tests and tools). */
export async function openDriver(url: string, cwd?: string): Promise<SqlDriver> {
  const location = parseStoreUrl(url, cwd)
  if (location.backend === 'sqlite') return openSqliteDriver(location.file)
  const { openPostgresDriver } = await import('./postgres/postgres-driver.ts')
  return openPostgresDriver(location.url)
}
