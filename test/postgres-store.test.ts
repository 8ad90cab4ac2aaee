/**
 * The store contract against a real PostgreSQL, on a throwaway cluster this file starts and
 * stops; plus what only PostgreSQL can get wrong (connection failures).
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import pg from 'pg'
import { EitriError } from '../src/errors/eitri-error.ts'
import { openStore } from '../src/store/open-store.ts'
import { openPostgresDriver } from '../src/store/postgres/postgres-driver.ts'
import { storeContract } from '../src/store/store-contract.ts'
import { startPostgresCluster, type PostgresCluster } from './helpers/postgres-cluster.ts'

let cluster: PostgresCluster
before(async () => {
  cluster = await startPostgresCluster()
})
after(() => cluster.stop())

storeContract({ name: 'postgres', freshUrl: () => cluster.createDatabase() })

async function openError(url: string): Promise<EitriError> {
  try {
    const store = await openStore(url)
    await store.close()
  } catch (error) {
    assert.ok(EitriError.isInstance(error), String(error))
    return error
  }
  assert.fail('the store opened')
}

describe('opening a PostgreSQL store that cannot be opened', () => {
  it('names an unreachable server and how to fix it, hiding the password', async () => {
    const closed = await startPostgresCluster().then(async (other) => {
      const port = other.port
      await other.stop()
      return port
    })
    const error = await openError(`postgres://eitri:hunter2@127.0.0.1:${closed}/eitri`)
    assert.equal(error.code, 'store_unavailable')
    assert.match(
      error.message,
      /Cannot connect to the PostgreSQL store at postgres:\/\/eitri:\*\*\*@127\.0\.0\.1/,
    )
    assert.match(error.message, /ECONNREFUSED/)
    assert.match(error.message, /Start the server/)
    assert.doesNotMatch(error.message, /hunter2/)
  })

  it('names a missing database and how to create it', async () => {
    const error = await openError(cluster.url('no_such_database'))
    assert.equal(error.code, 'store_unavailable')
    assert.match(error.message, /does not exist/)
    assert.match(error.message, /createdb/)
  })

  it('refuses a malformed URL before connecting', async () => {
    const error = await openError('postgres://')
    assert.equal(error.code, 'config_invalid')
    assert.match(error.message, /postgres:\/\/USER:PASSWORD@HOST:PORT\/DATABASE/)
  })
})

describe('a PostgreSQL write heard at its commit (deferSync)', () => {
  it('is an asynchronous commit of that transaction alone', async () => {
    // The tests' cluster commits asynchronously everywhere for speed: this database does not.
    const url = await cluster.createDatabase()
    const admin = new pg.Client({ connectionString: cluster.url('postgres') })
    await admin.connect()
    await admin.query(
      `ALTER DATABASE ${new URL(url).pathname.slice(1)} SET synchronous_commit = on`,
    )
    await admin.end()
    const driver = await openPostgresDriver(url)
    try {
      const setting = (deferSync: boolean) =>
        driver.transaction(
          'write',
          async (tx) => (await tx.get('SHOW synchronous_commit'))?.['synchronous_commit'],
          { deferSync },
        )
      assert.equal(await setting(false), 'on', 'an ordinary write waits for its flush')
      assert.equal(await setting(true), 'off')
      assert.equal(await setting(false), 'on', 'the next transaction on the connection waits again')
    } finally {
      await driver.close()
    }
  })
})
