/**
 * Durability and concurrency of both stores, with real processes: a writer killed with
 * SIGKILL at random points loses no acknowledged write and leaves no partial batch; two
 * processes writing one store at once lose nothing and corrupt nothing.
 */
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { DatabaseSync } from 'node:sqlite'
import { after, before, describe, it } from 'node:test'
import { setTimeout as delay } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { openStore } from '../src/store/open-store.ts'
import { BATCH_SIZE, EVENTS_PER_APPEND } from './fixtures/store-writer-shape.ts'
import { startPostgresCluster, type PostgresCluster } from './helpers/postgres-cluster.ts'

const WRITER = fileURLToPath(new URL('./fixtures/store-writer.ts', import.meta.url))
const KILL_RUNS = 20

interface Killed {
  readonly acknowledged: string[]
}

/** Starts the writer, kills it with SIGKILL after `acks` acknowledgements and `extraMs`. */
async function writeUntilKilled(
  url: string,
  prefix: string,
  acks: number,
  extraMs: number,
): Promise<Killed> {
  const child = spawn(process.execPath, [WRITER, url, prefix, 'journal'], { stdio: 'pipe' })
  const acknowledged: string[] = []
  let stderr = ''
  let buffer = ''
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  let reached: () => void = () => undefined
  const enough = new Promise<void>((resolve) => (reached = resolve))
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
  child.stdout.on('data', (chunk: Buffer) => {
    buffer += chunk.toString()
    const lines = buffer.split('\n')
    buffer = lines.pop() ?? ''
    for (const line of lines) {
      if (line !== 'open') acknowledged.push(line)
      if (acknowledged.length >= acks) reached()
    }
  })
  if (acks === 0) reached()
  await Promise.race([enough, exited])
  await delay(extraMs)
  child.kill('SIGKILL')
  await exited
  // Whatever was printed before the kill was acknowledged; drain what the pipe still holds.
  assert.equal(child.signalCode, 'SIGKILL', `the writer ended on its own: ${stderr}`)
  return { acknowledged }
}

async function checkNothingLost(
  url: string,
  prefixes: readonly string[],
  acknowledged: readonly string[][],
): Promise<number> {
  await using store = await openStore(url)
  const titles = (await store.tasks('main').list()).map((task) => task.title)
  let checked = 0
  for (const [run, prefix] of prefixes.entries()) {
    const lines = acknowledged[run] as string[]
    const batches = new Map<number, number>()
    for (const title of titles) {
      const match = new RegExp(`^${prefix}-batch-(\\d+)-item-\\d+$`).exec(title)
      if (match !== null) batches.set(Number(match[1]), (batches.get(Number(match[1])) ?? 0) + 1)
    }
    for (const [batch, size] of batches) {
      assert.equal(
        size,
        BATCH_SIZE,
        `${prefix}: batch ${batch} is partial (${size} of ${BATCH_SIZE})`,
      )
    }
    for (const line of lines) {
      const [kind, indexText] = line.split(' ') as [string, string]
      const index = Number(indexText)
      const runId = `${prefix}-run-${index}`
      const row = await store.getRun(runId)
      switch (kind) {
        case 'admit':
          assert.ok(row !== undefined, `${runId} was admitted but is missing`)
          break
        case 'batch':
          assert.equal(
            batches.get(index),
            BATCH_SIZE,
            `${prefix}: acknowledged batch ${index} missing`,
          )
          break
        case 'events':
          assert.equal((await store.listRunEvents(runId)).length, EVENTS_PER_APPEND)
          break
        case 'finish':
          assert.equal(
            row?.status,
            'completed',
            `${runId} finished but its row says ${row?.status}`,
          )
          assert.equal(row?.value, index)
          break
        default:
          assert.fail(`unexpected line ${line}`)
      }
      checked++
    }
    for (const run of await store.listRuns({ limit: 10_000 })) {
      if (!run.id.startsWith(`${prefix}-run-`)) continue
      const events = (await store.listRunEvents(run.id)).length
      assert.ok(events % EVENTS_PER_APPEND === 0, `${run.id} has a partial event batch (${events})`)
    }
  }
  return checked
}

function killSchedule(): { acks: number; extraMs: number }[] {
  // Random points, including before the first acknowledgement (during open and migration).
  return Array.from({ length: KILL_RUNS }, (_, run) => ({
    acks: run < 3 ? 0 : Math.floor(Math.random() * 40),
    extraMs: Math.floor(Math.random() * (run < 3 ? 300 : 15)),
  }))
}

async function durability(url: () => string, afterEach?: () => void): Promise<void> {
  const prefixes: string[] = []
  const acknowledged: string[][] = []
  for (const [run, point] of killSchedule().entries()) {
    const prefix = `k${run}`
    const killed = await writeUntilKilled(url(), prefix, point.acks, point.extraMs)
    prefixes.push(prefix)
    acknowledged.push(killed.acknowledged)
    afterEach?.()
  }
  const checked = await checkNothingLost(url(), prefixes, acknowledged)
  assert.ok(checked >= KILL_RUNS, `only ${checked} acknowledged writes were checked`)
}

function runWriter(url: string, prefix: string, count: number): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [WRITER, url, prefix, 'tasks', String(count)], {
      stdio: 'pipe',
    })
    let output = ''
    child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()))
    child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()))
    child.once('exit', (status) =>
      status === 0 && output.includes('done')
        ? resolve()
        : reject(new Error(`writer ${prefix} failed: ${output}`)),
    )
  })
}

async function concurrency(url: string): Promise<void> {
  const count = 120
  await Promise.all([runWriter(url, 'left', count), runWriter(url, 'right', count)])
  await using store = await openStore(url)
  const titles = new Set((await store.tasks('main').list()).map((task) => task.title))
  for (const side of ['left', 'right']) {
    for (let index = 0; index < count; index++)
      assert.ok(titles.has(`${side}-${index}`), `${side}-${index} lost`)
    for (let note = 0; note < 10; note++) {
      const entry = await store.knowledge('main').get(`${side} note ${note}`)
      assert.equal(entry?.body, `v${count - 10 + note}`, `${side} note ${note} lost its last write`)
    }
  }
}

describe('SQLite store under kill -9 and two processes', () => {
  let folder: string
  before(async () => {
    folder = await fs.mkdtemp(path.join(os.tmpdir(), 'eitri-durable-'))
  })
  after(() => fs.rm(folder, { recursive: true, force: true }))
  const integrity = (file: string) => {
    const database = new DatabaseSync(file)
    try {
      assert.deepEqual(
        { ...database.prepare('PRAGMA integrity_check').get() },
        { integrity_check: 'ok' },
      )
    } finally {
      database.close()
    }
  }

  it(`keeps every acknowledged write and no partial batch across ${KILL_RUNS} kills`, async () => {
    const file = path.join(folder, 'killed.sqlite')
    await durability(() => `sqlite:${file}`)
    integrity(file)
  })

  it('two processes writing one file lose nothing and corrupt nothing', async () => {
    const file = path.join(folder, 'shared.sqlite')
    await concurrency(`sqlite:${file}`)
    integrity(file)
  })
})

describe('PostgreSQL store under kill -9 and two processes', () => {
  let cluster: PostgresCluster
  before(async () => {
    cluster = await startPostgresCluster()
  })
  after(() => cluster.stop())

  it(`keeps every acknowledged write and no partial batch across ${KILL_RUNS} kills`, async () => {
    const url = await cluster.createDatabase()
    await durability(() => url)
  })

  it('two processes writing one database lose nothing', async () => {
    await concurrency(await cluster.createDatabase())
  })
})
