/**
 * @module store/postgres/postgres-driver
 * The SQL driver on `pg` (loaded only when a PostgreSQL store is opened): a pool of
 * connections, each transaction on one of them, committed before its promise resolves, and
 * retried on serialization failures and deadlocks.
 */
import type { Pool, PoolClient } from 'pg'
import { EitriError } from '../../errors/eitri-error.ts'
import { retryOnContention } from '../sql/contention.ts'
import { storableParameters } from '../sql/storable-text.ts'
import type {
  SqlDriver,
  SqlRow,
  SqlTransaction,
  SqlValue,
  TransactionMode,
  TransactionOptions,
} from '../sql/sql-driver.ts'

/** Connections per store. */
const POOL_SIZE = 8
/** How long a connection attempt may take before the store says the server is unreachable. */
const CONNECT_TIMEOUT_MS = 10_000
const INT8_OID = 20

const isContention = (error: unknown): boolean => {
  const code = (error as { code?: unknown } | null)?.code
  return code === '40001' || code === '40P01'
}

/** `?` placeholders to `$1…`, leaving quoted text alone. */
export function numberPlaceholders(sql: string): string {
  let index = 0
  let quoted = false
  let out = ''
  for (const character of sql) {
    if (character === "'") quoted = !quoted
    out += character === '?' && !quoted ? `$${++index}` : character
  }
  return out
}

/** `url` with its password masked, for messages. */
export function maskPassword(url: string): string {
  try {
    const parsed = new URL(url)
    if (parsed.password !== '') parsed.password = '***'
    return parsed.toString()
  } catch {
    return url.replace(/\/\/([^:/@]*):[^@]*@/, '//$1:***@')
  }
}

/**
 * Connects to the database at `url` and checks it answers.
 *
 * @throws EitriError `store_unavailable` saying what is wrong and how to fix it.
 */
export async function openPostgresDriver(url: string): Promise<PostgresDriver> {
  const location = maskPassword(url)
  const { default: pg } = await import('pg')
  const pool = new pg.Pool({
    connectionString: url,
    max: POOL_SIZE,
    connectionTimeoutMillis: CONNECT_TIMEOUT_MS,
    application_name: 'eitri',
    // Sequence numbers are BIGINT; as JavaScript numbers they are exact up to 2^53.
    types: {
      getTypeParser: ((oid: number, format?: string): unknown =>
        oid === INT8_OID
          ? (value: string) => Number(value)
          : (pg.types.getTypeParser(
              oid,
              format as 'text',
            ) as unknown)) as typeof pg.types.getTypeParser,
    },
  })
  // An idle connection that breaks (server restart) must not crash the process; the next
  // transaction gets a fresh one, or a clear error.
  pool.on('error', () => undefined)
  try {
    const client = await pool.connect()
    client.release()
  } catch (error) {
    await pool.end().catch(() => undefined)
    throw connectFailure(location, error)
  }
  return new PostgresDriver(pool, location)
}

function connectFailure(location: string, error: unknown): EitriError {
  const { code, message } = error as { code?: string; message: string }
  const fix =
    code === 'ECONNREFUSED' ||
    code === 'ENOTFOUND' ||
    code === 'EHOSTUNREACH' ||
    /timeout/i.test(message)
      ? 'Start the server, or fix the host and port in --store or EITRI_STORE.'
      : code === '28P01' || code === '28000'
        ? 'Fix the user or password in --store or EITRI_STORE (or the server’s pg_hba.conf).'
        : code === '3D000'
          ? 'Create the database first (createdb NAME), or name an existing one in the URL.'
          : 'Check the URL in --store or EITRI_STORE and that the server accepts connections.'
  return new EitriError(
    'store_unavailable',
    `Cannot connect to the PostgreSQL store at ${location}: ${message}${code === undefined ? '' : ` (${code})`}. ${fix}`,
    { cause: error },
  )
}

/** A `pg` pool as a SqlDriver. */
export class PostgresDriver implements SqlDriver {
  readonly dialect = 'postgres' as const
  readonly location: string
  readonly #pool: Pool
  #closed = false

  constructor(pool: Pool, location: string) {
    this.#pool = pool
    this.location = location
  }

  async transaction<T>(
    mode: TransactionMode,
    work: (transaction: SqlTransaction) => Promise<T>,
    options: TransactionOptions = {},
  ): Promise<T> {
    if (this.#closed) {
      throw new EitriError('not_available', `The store at ${this.location} is closed.`)
    }
    return retryOnContention(() => this.#attempt(mode, work, options.deferSync), isContention, {
      signal: options.signal,
      location: this.location,
    })
  }

  async #attempt<T>(
    mode: TransactionMode,
    work: (transaction: SqlTransaction) => Promise<T>,
    deferSync: boolean | undefined,
  ): Promise<T> {
    let client: PoolClient
    try {
      client = await this.#pool.connect()
    } catch (error) {
      throw connectFailure(this.location, error)
    }
    let broken = false
    try {
      await client.query(mode === 'write' ? 'BEGIN' : 'BEGIN READ ONLY')
      // PostgreSQL's asynchronous commit: the WAL writer flushes it soon, a synced commit at once.
      if (deferSync === true) await client.query('SET LOCAL synchronous_commit TO OFF')
      const result = await work(this.#transaction(client))
      await client.query('COMMIT')
      return result
    } catch (error) {
      try {
        await client.query('ROLLBACK')
      } catch {
        broken = true
      }
      throw error
    } finally {
      client.release(broken)
    }
  }

  #transaction(client: PoolClient): SqlTransaction {
    const query = async <Row extends SqlRow>(
      sql: string,
      parameters: readonly SqlValue[],
    ): Promise<{ rows: Row[]; rowCount: number }> => {
      const result = await client.query<Row>(numberPlaceholders(sql), [
        ...storableParameters(parameters),
      ])
      return { rows: result.rows, rowCount: result.rowCount ?? 0 }
    }
    return {
      dialect: 'postgres',
      all: async <Row extends SqlRow>(sql: string, parameters: readonly SqlValue[] = []) =>
        (await query<Row>(sql, parameters)).rows,
      get: async <Row extends SqlRow>(sql: string, parameters: readonly SqlValue[] = []) =>
        (await query<Row>(sql, parameters)).rows[0],
      run: async (sql: string, parameters: readonly SqlValue[] = []) =>
        (await query(sql, parameters)).rowCount,
      nextSequences: async (count: number) => {
        const { rows } = await query<{ value: number }>(
          "SELECT nextval('store_sequence') AS value FROM generate_series(1, CAST(? AS INTEGER))",
          [count],
        )
        return rows.map((row) => Number(row.value)).sort((a, b) => a - b)
      },
    }
  }

  async close(): Promise<void> {
    if (this.#closed) return
    this.#closed = true
    await this.#pool.end()
  }
}
