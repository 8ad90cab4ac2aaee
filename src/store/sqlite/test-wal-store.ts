/**
 * Test support for the SQLite driver's syncs: a store on a temporary file whose log syncs the
 * test finishes by hand, the notes it committed as a fresh connection reads them, and a writer
 * killed right after it heard of a group.
 */
import { spawn } from 'node:child_process'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { DatabaseSync } from 'node:sqlite'
import type { TestContext } from 'node:test'
import { fileURLToPath } from 'node:url'
import type { TransactionOptions } from '../sql/sql-driver.ts'
import { openSqliteDriver, type SqliteDriver } from './sqlite-driver.ts'
import type { Datasync } from './wal-sync.ts'

/** A fresh folder's `store.sqlite`, removed after the test. */
export async function tempFile(t: TestContext): Promise<string> {
  const folder = await fs.mkdtemp(path.join(os.tmpdir(), 'eitri-walsync-'))
  t.after(() => fs.rm(folder, { recursive: true, force: true }))
  return path.join(folder, 'store.sqlite')
}

/** A datasync the test finishes by hand: each call waits for `finish(n)` or `fail(n)`. */
export function heldSyncs(): {
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
export async function settled(promise: Promise<unknown>): Promise<boolean> {
  let done = false
  promise.then(
    () => (done = true),
    () => (done = true),
  )
  for (let turn = 0; turn < 5; turn++) await new Promise((resolve) => setImmediate(resolve))
  return done
}

export async function withNotes(driver: SqliteDriver): Promise<void> {
  await driver.transaction('write', (tx) => tx.run('CREATE TABLE notes (text TEXT)'))
}

/** Inserts one note (a write that throws after it when `fail`), with the transaction's options. */
export const insert = (
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
export function committedNotes(file: string): string[] {
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
export async function heldNotesStore(t: TestContext) {
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
export async function untilCommitted(file: string, count: number): Promise<void> {
  for (let turn = 0; turn < 50 && committedNotes(file).length < count; turn++) {
    await new Promise((resolve) => setTimeout(resolve, 2))
  }
}

/**
 * Starts a child that writes notes in groups of 20 (`deferSync` as given) and prints each group
 * as it hears success, SIGKILLs it at its first line (no close, checkpoint or exit handler
 * runs), and answers the group it heard of: every note of it must be committed.
 */
export async function heardBeforeKill(file: string, deferSync: boolean): Promise<string> {
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
  return heard
}
