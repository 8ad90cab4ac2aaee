import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import fs from 'node:fs/promises'
import { statSync } from 'node:fs'
import { DatabaseSync } from 'node:sqlite'
import { describe, it } from 'node:test'
import { EitriError } from '../../errors/eitri-error.ts'
import { openSqliteDriver, type SqliteDriver } from './sqlite-driver.ts'
import {
  committedNotes,
  heardBeforeKill,
  heldNotesStore,
  heldSyncs,
  insert,
  settled,
  tempFile,
  untilCommitted,
  withNotes,
} from './test-wal-store.ts'
import type { Datasync } from './wal-sync.ts'

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
    const file = await tempFile(t)
    const heard = await heardBeforeKill(file, false)
    const rows = committedNotes(file)
    for (let j = 0; j < 20; j++) assert.ok(rows.includes(`${heard}-${j}`), `${heard}-${j} lost`)
  })
})
