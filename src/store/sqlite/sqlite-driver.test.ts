import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { spawn } from 'node:child_process'
import { once } from 'node:events'
import { DatabaseSync } from 'node:sqlite'
import { describe, it, type TestContext } from 'node:test'
import { EitriError } from '../../errors/eitri-error.ts'
import { openStore } from '../open-store.ts'
import { openSqliteDriver } from './sqlite-driver.ts'

async function tempFolder(t: TestContext): Promise<string> {
  const folder = await fs.mkdtemp(path.join(os.tmpdir(), 'eitri-sqlite-'))
  t.after(() => fs.rm(folder, { recursive: true, force: true }))
  return folder
}

async function openError(url: string): Promise<EitriError> {
  try {
    await (await openStore(url)).close()
  } catch (error) {
    assert.ok(EitriError.isInstance(error), String(error))
    return error
  }
  assert.fail('the store opened')
}

describe('the SQLite store', () => {
  it('creates its folder and a database in WAL mode', async (t) => {
    const file = path.join(await tempFolder(t), 'deep', 'er', 'store.sqlite')
    await (await openStore(`sqlite:${file}`)).close()
    const database = new DatabaseSync(file, { readOnly: true })
    try {
      assert.deepEqual(
        { ...database.prepare('PRAGMA journal_mode').get() },
        { journal_mode: 'wal' },
      )
    } finally {
      database.close()
    }
  })

  it('waits for another process that holds a new store file locked, not failing at once', async (t) => {
    const file = path.join(await tempFolder(t), 'store.sqlite')
    // Another process makes the file and holds it locked for a moment, as a second eitri does
    // while it switches a new store to WAL.
    const holder = spawn(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `import { DatabaseSync } from 'node:sqlite'
        const database = new DatabaseSync(${JSON.stringify(file)})
        database.exec('BEGIN EXCLUSIVE; CREATE TABLE held (x)')
        process.stdout.write('locked\\n')
        setTimeout(() => { database.exec('COMMIT'); database.close() }, 400)`,
      ],
      { stdio: ['ignore', 'pipe', 'inherit'] },
    )
    const exited = once(holder, 'exit')
    await once(holder.stdout, 'data')
    // The control: a plain open in the same moment is refused for the lock.
    assert.throws(
      () => new DatabaseSync(file, { timeout: 20 }).exec('SELECT count(*) FROM sqlite_schema'),
      /locked/,
    )
    await openSqliteDriver(file).close()
    await exited
    const plain = new DatabaseSync(file)
    const { journal_mode: mode } = plain.prepare('PRAGMA journal_mode').get() as {
      journal_mode: string
    }
    plain.close()
    assert.equal(mode, 'wal')
  })

  it('refuses a file that is not a database, saying what to do, and leaves it alone', async (t) => {
    const file = path.join(await tempFolder(t), 'notes.txt')
    await fs.writeFile(file, 'these are my notes, not a database\n'.repeat(200))
    const error = await openError(`sqlite:${file}`)
    assert.equal(error.code, 'store_unavailable')
    assert.match(error.message, /is not an SQLite database/)
    assert.match(error.message, /--store sqlite:PATH/)
    assert.equal(
      await fs.readFile(file, 'utf8'),
      'these are my notes, not a database\n'.repeat(200),
    )
  })

  it('refuses a path it cannot create, saying what to do', async (t) => {
    const blocker = path.join(await tempFolder(t), 'file')
    await fs.writeFile(blocker, '')
    const error = await openError(`sqlite:${blocker}/store.sqlite`)
    assert.equal(error.code, 'store_unavailable')
    assert.match(error.message, /Cannot open the store file/)
  })

  it('forks in O(1): a fork of a line with many rows writes one row', async (t) => {
    const file = path.join(await tempFolder(t), 'store.sqlite')
    await using store = await openStore(`sqlite:${file}`)
    await store
      .tasks('main')
      .createMany(Array.from({ length: 500 }, (_, i) => ({ title: `t${i}` })))
    await store
      .knowledge('main')
      .addMany(Array.from({ length: 200 }, (_, i) => ({ title: `k${i}`, body: `[[k${i + 1}]]` })))
    const counts = () => {
      const database = new DatabaseSync(file, { readOnly: true })
      try {
        return ['task_versions', 'knowledge_versions', 'knowledge_links', 'lines'].map(
          (table) =>
            (database.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n,
        )
      } finally {
        database.close()
      }
    }
    const before = counts()
    await store.forkLine('main', 'run-1')
    assert.deepEqual(counts(), [before[0], before[1], before[2], (before[3] as number) + 1])
    assert.equal((await store.tasks('run-1').list()).length, 500)
  })

  it('opens in memory', async () => {
    await using store = await openStore('sqlite::memory:')
    await store.tasks('main').create({ title: 'x' })
    assert.equal(store.location, 'sqlite::memory:')
    assert.equal((await store.tasks('main').list()).length, 1)
  })

  it('commits writes that wait together once, and one that fails fails alone', async (t) => {
    const file = path.join(await tempFolder(t), 'store.sqlite')
    await using store = await openStore(`sqlite:${file}`)
    await store.admitRun({ id: 'taken' })
    // Wraps exec, still calling it, to count the commits.
    const exec = t.mock.method(DatabaseSync.prototype, 'exec')
    const writes = Array.from({ length: 40 }, (_, index) =>
      store.admitRun({
        id: index === 20 ? 'taken' : `run-${index}`,
        events: [{ type: 'trigger' }],
      }),
    )
    const outcomes = await Promise.allSettled(writes)
    const commits = exec.mock.calls.filter((call) => call.arguments[0] === 'COMMIT').length
    assert.ok(commits < 10, `${commits} commits for 40 writes`)
    assert.deepEqual(
      outcomes.map((outcome) => outcome.status),
      outcomes.map((_, index) => (index === 20 ? 'rejected' : 'fulfilled')),
    )
    const refused = outcomes[20] as PromiseRejectedResult
    assert.equal((refused.reason as EitriError).code, 'conflict')
    t.mock.restoreAll()
    // The failed one left nothing (no second journal entry on the Run it collided with); the
    // others are all there, durably: a fresh connection reads them.
    assert.deepEqual(await store.listRunEvents('taken'), [])
    const database = new DatabaseSync(file, { readOnly: true })
    try {
      const count = database.prepare('SELECT count(*) AS n FROM runs').get() as { n: number }
      const events = database.prepare('SELECT count(*) AS n FROM run_events').get() as { n: number }
      assert.deepEqual([count.n, events.n], [40, 39])
    } finally {
      database.close()
    }
  })

  it('undoes a grouped write that throws after writing, and only it', async (t) => {
    const driver = openSqliteDriver(path.join(await tempFolder(t), 'store.sqlite'))
    t.after(() => driver.close())
    await driver.transaction('write', (tx) => tx.run('CREATE TABLE notes (text TEXT)'))
    const insert = (text: string, fail: boolean) =>
      driver.transaction('write', async (tx) => {
        await tx.run('INSERT INTO notes (text) VALUES (?)', [text])
        if (fail) throw new Error(`refused ${text}`)
        return text
      })
    const outcomes = await Promise.allSettled([
      insert('a', false),
      insert('b', true),
      insert('c', false),
    ])
    assert.deepEqual(
      outcomes.map((outcome) => (outcome.status === 'fulfilled' ? outcome.value : 'refused')),
      ['a', 'refused', 'c'],
    )
    const rows = await driver.transaction('read', (tx) => tx.all('SELECT text FROM notes'))
    assert.deepEqual(
      rows.map((row) => row['text']),
      ['a', 'c'],
    )
  })

  it('writes a lone write without a savepoint, and undoes it whole when it throws', async (t) => {
    const driver = openSqliteDriver(path.join(await tempFolder(t), 'store.sqlite'))
    t.after(() => driver.close())
    await driver.transaction('write', (tx) => tx.run('CREATE TABLE notes (text TEXT)'))
    const exec = t.mock.method(DatabaseSync.prototype, 'exec')
    const insert = (text: string, fail: boolean) =>
      driver.transaction('write', async (tx) => {
        await tx.run('INSERT INTO notes (text) VALUES (?)', [text])
        if (fail) throw new Error(`refused ${text}`)
        return text
      })
    assert.equal(await insert('a', false), 'a')
    await assert.rejects(insert('b', true), /refused b/)
    assert.equal(await insert('c', false), 'c')
    const statements = exec.mock.calls.map((call) => call.arguments[0])
    assert.deepEqual(statements, [
      'BEGIN IMMEDIATE',
      'COMMIT',
      'BEGIN IMMEDIATE',
      'ROLLBACK',
      'BEGIN IMMEDIATE',
      'COMMIT',
    ])
    t.mock.restoreAll()
    const rows = await driver.transaction('read', (tx) => tx.all('SELECT text FROM notes'))
    assert.deepEqual(
      rows.map((row) => row['text']),
      ['a', 'c'],
    )
  })
})
