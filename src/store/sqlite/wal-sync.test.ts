import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import fs from 'node:fs/promises'
import { statSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { DatabaseSync } from 'node:sqlite'
import { describe, it, type TestContext } from 'node:test'
import { fileURLToPath } from 'node:url'
import { EitriError } from '../../errors/eitri-error.ts'
import type { TransactionOptions } from '../sql/sql-driver.ts'
import { openSqliteDriver, type SqliteDriver } from './sqlite-driver.ts'
import type { Datasync } from './wal-sync.ts'

/** A fresh folder's `store.sqlite`, removed after the test. */
async function tempFile(t: TestContext): Promise<string> {
  const folder = await fs.mkdtemp(path.join(os.tmpdir(), 'eitri-walsync-'))
  t.after(() => fs.rm(folder, { recursive: true, force: true }))
  return path.join(folder, 'store.sqlite')
}

/** A datasync the test finishes by hand: each call waits for `finish(n)` or `fail(n)`. */
function heldSyncs(): {
  datasync: Datasync
  calls: { finish: () => void; fail: (error: Error) => void }[]
  called: (count: number) => Promise<void>
} {
  const calls: { finish: () => void; fail: (error: Error) => void }[] = []
  const datasync: Datasync = (handle) =>
    new Promise<void>((resolve, reject) => {
      calls.push({
        finish: () => void handle.datasync().then(resolve, reject),
        fail: reject,
      })
    })
  const called = async (count: number): Promise<void> => {
    while (calls.length < count) await new Promise((resolve) => setTimeout(resolve, 2))
  }
  return { datasync, calls, called }
}

/** Whether `promise` has settled by the time the event loop has turned a few times. */
async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false
  promise.then(
    () => (done = true),
    () => (done = true),
  )
  for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setImmediate(resolve))
  return done
}

async function withNotes(driver: SqliteDriver): Promise<void> {
  await driver.transaction('write', (tx) => tx.run('CREATE TABLE notes (text TEXT)'))
}

/** Inserts one note (a write that throws after it when `fail`), with the transaction's options. */
const insert = (
  driver: SqliteDriver,
  text: string,
  fail = false,
  options: TransactionOptions = {},
) =>
  driver.transaction(
    'write',
    async (tx) => {
      await tx.run('INSERT INTO notes (text) VALUES (?)', [text])
      if (fail) throw new Error(`refused ${text}`)
      return text
    },
    options,
  )

/** The notes a fresh connection reads: what is committed, whoever wrote it. */
function committedNotes(file: string): string[] {
  const database = new DatabaseSync(file, { readOnly: true })
  try {
    return database
      .prepare('SELECT text FROM notes ORDER BY rowid')
      .all()
      .map((row) => String(row['text']))
  } finally {
    database.close()
  }
}

/**
 * A store on a temporary file whose syncs the test finishes by hand, with the notes table
 * made (its one sync already finished).
 */
async function heldNotesStore(t: TestContext) {
  const file = await tempFile(t)
  const syncs = heldSyncs()
  const driver = openSqliteDriver(file, { datasync: syncs.datasync })
  t.after(() => driver.close())
  const setup = withNotes(driver)
  await syncs.called(1)
  syncs.calls[0]?.finish()
  await setup
  return { file, syncs, driver }
}

/** Waits, a bounded while, until `count` notes are committed; the caller asserts on them. */
async function untilCommitted(file: string, count: number): Promise<void> {
  for (let turn = 0; turn < 50 && committedNotes(file).length < count; turn++) {
    await new Promise((resolve) => setTimeout(resolve, 2))
  }
}

/**
 * Starts a child that writes notes in groups of 20 (`deferSync` as given) and prints each group
 * as it hears success, SIGKILLs it at its first line (no close, checkpoint or exit handler
 * runs), and answers the notes of the group it heard of that are not committed: none must be.
 */
async function lostAfterKill(file: string, deferSync: boolean): Promise<string[]> {
  const driverUrl = new URL('./sqlite-driver.ts', import.meta.url).href
  const child = spawn(
    process.execPath,
    [
      '--disable-warning=ExperimentalWarning',
      '--input-type=module',
      '-e',
      `
      const { openSqliteDriver } = await import(${JSON.stringify(driverUrl)})
      const driver = openSqliteDriver(${JSON.stringify(file)})
      await driver.transaction('write', (tx) => tx.run('CREATE TABLE notes (text TEXT)'))
      for (let i = 0; ; i++) {
        const writes = Array.from({ length: 20 }, (_, j) =>
          driver.transaction('write', (tx) => tx.run('INSERT INTO notes (text) VALUES (?)', ['n' + i + '-' + j]),
            { deferSync: ${deferSync} }))
        await Promise.all(writes)
        process.stdout.write('n' + i + '\\n')
      }
      `,
    ],
    { stdio: ['ignore', 'pipe', 'inherit'], cwd: path.dirname(fileURLToPath(import.meta.url)) },
  )
  const heard = await new Promise<string>((resolve, reject) => {
    child.stdout.once('data', (chunk: Buffer) => {
      child.kill('SIGKILL')
      resolve(chunk.toString().split('\n')[0] as string)
    })
    child.once('exit', (code) => reject(new Error(`the child exited (${code}) before a row`)))
  })
  await new Promise((resolve) => child.once('exit', resolve))
  if (child.signalCode !== 'SIGKILL') throw new Error(`the child ended by ${child.signalCode}`)
  const committed = new Set(committedNotes(file))
  const group = Array.from({ length: 20 }, (_, j) => `${heard}-${j}`)
  return group.filter((note) => !committed.has(note))
}

describe('SQLite commits made durable off the thread', () => {
  it('runs commits with synchronous=NORMAL in WAL mode, and FULL in memory', async (t) => {
    const driver = openSqliteDriver(await tempFile(t))
    t.after(() => driver.close())
    const memory = openSqliteDriver(':memory:')
    t.after(() => memory.close())
    const level = (d: SqliteDriver) =>
      d.transaction('read', async (tx) => (await tx.get('PRAGMA synchronous'))?.['synchronous'])
    // 1 is NORMAL, 2 is FULL.
    assert.deepEqual([await level(driver), await level(memory)], [1, 2])
  })

  it('lets a writer hear only after a sync that began after its commit', async (t) => {
    const { file, syncs, driver } = await heldNotesStore(t)

    // Group 1: one that succeeds and one that fails; both wait for the sync.
    const a = insert(driver, 'a')
    const refused = insert(driver, 'refused', true)
    await syncs.called(2)
    assert.deepEqual(committedNotes(file), ['a'], 'group 1 is committed before its sync')
    assert.equal(await settled(a), false, 'a heard before its sync finished')
    assert.equal(await settled(refused), false, 'a failure heard before the sync finished')

    // Group 2 commits while group 1's sync is still running, and must not ride on it.
    const b = insert(driver, 'b')
    await untilCommitted(file, 2)
    assert.deepEqual(committedNotes(file), ['a', 'b'], 'group 2 committed during the sync')
    assert.equal(syncs.calls.length, 2, 'a second sync started while one runs')

    syncs.calls[1]?.finish()
    assert.equal(await a, 'a')
    await assert.rejects(refused, /refused refused/)
    assert.equal(await settled(b), false, 'b heard from a sync that began before its commit')

    await syncs.called(3)
    syncs.calls[2]?.finish()
    assert.equal(await b, 'b')
  })

  it('refuses every writer of a failed sync, those committed during it, and all later work', async (t) => {
    const { file, syncs, driver } = await heldNotesStore(t)

    const first = [insert(driver, 'a'), insert(driver, 'b')]
    await syncs.called(2)
    const during = insert(driver, 'c')
    await untilCommitted(file, 3)
    syncs.calls[1]?.fail(Object.assign(new Error('EIO: i/o error, fdatasync'), { code: 'EIO' }))

    const outcomes = await Promise.allSettled([...first, during])
    for (const outcome of outcomes) {
      assert.equal(outcome.status, 'rejected')
      const error: unknown = outcome.reason
      assert.ok(EitriError.isInstance(error))
      assert.equal(error.code, 'store_unavailable')
      assert.match(error.message, /could not make its last writes durable/)
      assert.match(error.message, /EIO/)
    }
    // No sync ran after the failure: its success would say nothing about the lost pages.
    assert.equal(syncs.calls.length, 2)
    await assert.rejects(insert(driver, 'later'), { code: 'store_unavailable' })
    await assert.rejects(
      driver.transaction('read', (tx) => tx.all('SELECT * FROM notes')),
      { code: 'store_unavailable' },
    )
  })

  it('syncs the very log file SQLite writes, across checkpoints that restart and truncate it', async (t) => {
    const file = await tempFile(t)
    const synced: number[] = []
    const datasync: Datasync = async (handle) => {
      synced.push((await handle.stat()).ino)
      await handle.datasync()
    }
    const driver = openSqliteDriver(file, { datasync })
    t.after(() => driver.close())
    await withNotes(driver)
    const ino = statSync(`${file}-wal`).ino
    // Enough rows to pass the auto-checkpoint (1,000 pages) a few times: the log restarts.
    const body = 'x'.repeat(3000)
    for (let round = 0; round < 8; round++) {
      await Promise.all(
        Array.from({ length: 200 }, (_, i) => insert(driver, `${round}-${i}${body}`)),
      )
    }
    // Another process writes, then closes: it is not the last connection, so the log stays.
    await new Promise<void>((resolve, reject) => {
      const child = spawn(process.execPath, [
        '--input-type=module',
        '-e',
        `import { DatabaseSync } from 'node:sqlite'
        const db = new DatabaseSync(${JSON.stringify(file)})
        db.exec("INSERT INTO notes (text) VALUES ('from another process')")
        db.close()`,
      ])
      child.once('exit', (code) => (code === 0 ? resolve() : reject(new Error(`exit ${code}`))))
    })
    assert.equal(statSync(`${file}-wal`).ino, ino)
    // Another connection checkpoints and truncates the log, in place.
    const other = new DatabaseSync(file)
    other.exec('PRAGMA wal_checkpoint(TRUNCATE)')
    other.close()
    assert.equal(statSync(`${file}-wal`).size, 0)
    assert.equal(await insert(driver, 'after truncate'), 'after truncate')
    assert.ok(synced.length > 8)
    assert.deepEqual(new Set(synced), new Set([ino]))
    assert.equal(statSync(`${file}-wal`).ino, ino)
    assert.equal(committedNotes(file).length, 2 + 8 * 200)
  })

  it('fails closed when the log at its path is no longer the file SQLite writes', async (t) => {
    const file = await tempFile(t)
    const driver = openSqliteDriver(file)
    t.after(() => driver.close())
    await withNotes(driver)
    // Positive control: the same write passes while the log is in place.
    assert.equal(await insert(driver, 'a'), 'a')
    await fs.rename(`${file}-wal`, `${file}-wal.aside`)
    await fs.writeFile(`${file}-wal`, '')
    await assert.rejects(insert(driver, 'b'), (error: EitriError) => {
      assert.equal(error.code, 'store_unavailable')
      assert.match(error.message, /was replaced while the store had it open/)
      return true
    })
  })

  it('keeps a row a writer heard of when the process is killed right after', async (t) => {
    assert.deepEqual(await lostAfterKill(await tempFile(t), false), [])
  })
})

describe('a write heard at its commit, synced with the next (deferSync)', () => {
  it('is heard with no sync of its own; the next synced write waits for a sync that covers it', async (t) => {
    const { file, syncs, driver } = await heldNotesStore(t)
    // Positive control: an ordinary write is not heard while its sync is held.
    const ordinary = insert(driver, 'ordinary')
    await syncs.called(2)
    assert.equal(await settled(ordinary), false, 'an ordinary write heard before its sync')
    syncs.calls[1]?.finish()
    await ordinary

    const deferred = insert(driver, 'deferred', false, { deferSync: true })
    assert.equal(await settled(deferred), true, 'a deferred write waited for a sync')
    assert.equal(await deferred, 'deferred')
    assert.equal(syncs.calls.length, 2, 'a deferred write started a sync of its own')
    assert.deepEqual(committedNotes(file), ['ordinary', 'deferred'], 'it is committed')

    const next = insert(driver, 'next')
    await syncs.called(3)
    assert.equal(await settled(next), false, 'the next write heard before its sync')
    syncs.calls[2]?.finish()
    assert.equal(await next, 'next')
  })

  it('waits for the sync in a group with an ordinary write, and syncs at close what none waited for', async (t) => {
    const { syncs, driver } = await heldNotesStore(t)
    const both = [insert(driver, 'a', false, { deferSync: true }), insert(driver, 'b')]
    await syncs.called(2)
    assert.equal(await settled(both[0] as Promise<string>), false, 'heard before the group synced')
    syncs.calls[1]?.finish()
    assert.deepEqual(await Promise.all(both), ['a', 'b'])

    const last = insert(driver, 'last', false, { deferSync: true })
    assert.equal(await settled(last), true, 'a deferred write waited for a sync')
    assert.equal(syncs.calls.length, 2)
    const closing = driver.close()
    await syncs.called(3)
    assert.equal(await settled(closing), false, 'closed before syncing what none waited for')
    syncs.calls[2]?.finish()
    await closing
  })

  it('keeps what a writer heard of when the process is killed right after', async (t) => {
    assert.deepEqual(await lostAfterKill(await tempFile(t), true), [])
  })
})
