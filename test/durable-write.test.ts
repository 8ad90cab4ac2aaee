/**
 * A Run's terminal write while a real PostgreSQL refuses every connection for a while: the
 * plain write fails, the durable one waits unresolved and lands once the database accepts
 * connections again.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import { setTimeout as delay } from 'node:timers/promises'
import pg from 'pg'
import { durableWrite } from '../src/agent/durable-write.ts'
import { EitriError } from '../src/errors/eitri-error.ts'
import { openStore } from '../src/store/open-store.ts'
import { startPostgresCluster, type PostgresCluster } from './helpers/postgres-cluster.ts'

let cluster: PostgresCluster
before(async () => {
  cluster = await startPostgresCluster()
})
after(() => cluster.stop())

/** Runs statements as the superuser on the maintenance database. */
async function admin(statements: readonly string[]): Promise<void> {
  const client = new pg.Client({ connectionString: cluster.url('postgres') })
  await client.connect()
  try {
    for (const statement of statements) await client.query(statement)
  } finally {
    await client.end()
  }
}

describe('durableWrite against a PostgreSQL that refuses connections', () => {
  it('keeps the terminal write unresolved while refused, and lands it after', async () => {
    const url = await cluster.createDatabase('refusing')
    await using store = await openStore(url)
    await store.admitRun({ id: 'r', lease: { owner: 'me', ttlMs: 60_000 } })
    await admin([
      `ALTER DATABASE refusing ALLOW_CONNECTIONS false`,
      `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = 'refusing'`,
    ])
    // The control: a plain write fails while the database refuses.
    await assert.rejects(store.finishRun('r', { status: 'completed', value: 1 }), (error) => {
      assert.ok(!EitriError.isInstance(error) || error.code === 'store_unavailable', String(error))
      return true
    })
    const failures: unknown[] = []
    let landed = false
    const write = durableWrite(
      (call) => store.finishRun('r', { status: 'completed', value: 42 }, call),
      { log: (_, error) => failures.push(error), logEveryMs: 0 },
    ).finally(() => (landed = true))
    await delay(1_000)
    assert.equal(landed, false, 'the write resolved while the store refused it')
    assert.ok(failures.length >= 3, `only ${failures.length} attempts in a second`)
    await admin([`ALTER DATABASE refusing ALLOW_CONNECTIONS true`])
    const row = await write
    assert.equal(row.status, 'completed')
    assert.equal(row.value, 42)
    assert.equal((await store.getRun('r'))?.status, 'completed')
  })
})
