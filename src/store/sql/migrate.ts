/**
 * @module store/sql/migrate
 * Brings a database to the schema of this eitri, in one transaction, or refuses a database
 * written by a newer eitri.
 */
import { EitriError } from '../../errors/eitri-error.ts'
import { MIGRATIONS, type Migration } from '../migrations.ts'
import type { SqlDriver } from './sql-driver.ts'

/** Any constant shared by every eitri: it serializes migrations across PostgreSQL clients. */
const MIGRATION_LOCK_KEY = 0x65697472

/**
 * Applies the migrations a database lacks and records each in `eitri_migrations`.
 * Answers the schema version now in force.
 *
 * @throws EitriError `store_unavailable` when the database is newer than this eitri.
 */
export async function migrate(
  driver: SqlDriver,
  migrations: readonly Migration[] = MIGRATIONS,
  options: { readonly signal?: AbortSignal | undefined } = {},
): Promise<number> {
  return driver.transaction(
    'write',
    async (transaction) => {
      if (transaction.dialect === 'postgres') {
        await transaction.get('SELECT pg_advisory_xact_lock(?)', [MIGRATION_LOCK_KEY])
      }
      await transaction.run(`CREATE TABLE IF NOT EXISTS eitri_migrations (
        version INTEGER PRIMARY KEY,
        name TEXT NOT NULL,
        applied_at TEXT NOT NULL
      )`)
      const row = await transaction.get<{ version: number | null }>(
        'SELECT MAX(version) AS version FROM eitri_migrations',
      )
      const current = Number(row?.version ?? 0)
      if (current > migrations.length) {
        throw new EitriError(
          'store_unavailable',
          `The store at ${driver.location} has schema version ${current}, written by a newer eitri; this eitri knows versions up to ${migrations.length}. Upgrade eitri (npm install eitri@latest), or point --store or EITRI_STORE at another database.`,
          { data: { version: current, known: migrations.length } },
        )
      }
      for (let version = current + 1; version <= migrations.length; version++) {
        const migration = migrations[version - 1] as Migration
        for (const statement of migration[transaction.dialect]) await transaction.run(statement)
        await transaction.run(
          'INSERT INTO eitri_migrations (version, name, applied_at) VALUES (?, ?, ?)',
          [version, migration.name, new Date().toISOString()],
        )
      }
      return migrations.length
    },
    options,
  )
}

/** The schema version a database is at. */
export async function schemaVersion(
  driver: SqlDriver,
  options: { readonly signal?: AbortSignal | undefined } = {},
): Promise<number> {
  return driver.transaction(
    'read',
    async (transaction) => {
      const row = await transaction.get<{ version: number | null }>(
        'SELECT MAX(version) AS version FROM eitri_migrations',
      )
      return Number(row?.version ?? 0)
    },
    options,
  )
}
