/**
 * The store on both backends, in one run, each against the bare database doing the same:
 *
 * - Run admissions per second: `admitRun` (insert + durable commit) against a bare INSERT
 *   committed with the same durability (SQLite WAL + synchronous=FULL; PostgreSQL with fsync);
 * - a task update: `tasks.update` (a new version, line-locked) against a bare UPDATE;
 * - knowledge search over 100,000 entries: `knowledge.search` (ranked, line-aware, snippets)
 *   against the bare ranked full-text query on the same index, without line visibility.
 *
 * PostgreSQL runs on a throwaway cluster this bench starts (durable settings) and stops.
 */
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { performance } from 'node:perf_hooks'
import { DatabaseSync } from 'node:sqlite'
import pg from 'pg'
import { openStore, type Store } from '../src/entry/store.ts'
import { startPostgresCluster } from '../test/helpers/postgres-cluster.ts'
import { medianMicros, report } from './measure.ts'

const ADMISSIONS = 400
const UPDATES = 400
const SEARCHES = 200
const ENTRIES = 100_000
const WORDS_PER_BODY = 40
const VOCABULARY = 20_000

/** A deterministic pseudo-random source, so both backends get the same entries. */
function random(seed: number): () => number {
  let state = seed
  return () => {
    state = (state * 1_103_515_245 + 12_345) % 2_147_483_648
    return state / 2_147_483_648
  }
}
const word = (index: number): string => `w${index.toString(36)}x`

function entries(): { title: string; body: string }[] {
  const next = random(42)
  return Array.from({ length: ENTRIES }, (_, index) => ({
    title: `Entry ${index} ${word(Math.floor(next() * VOCABULARY))}`,
    body: Array.from({ length: WORDS_PER_BODY }, () => word(Math.floor(next() * VOCABULARY))).join(
      ' ',
    ),
  }))
}

function queries(): string[] {
  const next = random(7)
  return Array.from(
    { length: 50 },
    () => `${word(Math.floor(next() * VOCABULARY))} ${word(Math.floor(next() * VOCABULARY))}`,
  )
}

async function perSecond(count: number, run: (index: number) => Promise<unknown>): Promise<number> {
  const start = performance.now()
  for (let index = 0; index < count; index++) await run(index)
  return count / ((performance.now() - start) / 1000)
}

function reportRate(name: string, ours: number, bare: number, bareName: string): void {
  process.stdout.write(
    `${name.padEnd(44)} ${`${ours.toFixed(0)}/s`.padStart(10)}   vs ${bareName.padEnd(28)} ${`${bare.toFixed(0)}/s`.padStart(10)}   ratio ${(ours / bare).toFixed(2)}x\n`,
  )
}

interface Bare {
  admit(index: number): Promise<void>
  update(index: number): Promise<void>
  search(query: string): Promise<void>
  /** Runs after seeding, before searches: what a deployed database has done by then. */
  settle(): Promise<void>
}

async function measure(label: string, store: Store, bare: Bare): Promise<void> {
  const ours = await perSecond(ADMISSIONS, (index) =>
    store.admitRun({ id: `bench-${index}`, programKind: 'echo', trigger: { task: 'bench' } }),
  )
  const theirs = await perSecond(ADMISSIONS, (index) => bare.admit(index))
  reportRate(`${label}: Run admissions (durable)`, ours, theirs, 'bare INSERT + commit')

  const tasks = store.tasks('main')
  const task = await tasks.create({ title: 'bench' })
  const statuses = ['in-progress', 'pending'] as const
  let flip = 0
  const update = await medianMicros(
    () => tasks.update(task.id, { status: statuses[flip++ % 2] }),
    UPDATES,
  )
  let bareFlip = 0
  const bareUpdate = await medianMicros(() => bare.update(bareFlip++), UPDATES)
  report(`${label}: task update`, update, bareUpdate, 'bare UPDATE + commit')

  const knowledge = store.knowledge('main')
  const seedStart = performance.now()
  const all = entries()
  for (let start = 0; start < all.length; start += 2000) {
    await knowledge.addMany(all.slice(start, start + 2000))
  }
  process.stdout.write(
    `${label}: seeded ${ENTRIES} entries in ${((performance.now() - seedStart) / 1000).toFixed(1)} s\n`,
  )
  await bare.settle()
  const list = queries()
  let queryIndex = 0
  let hits = 0
  const search = await medianMicros(async () => {
    hits += (await knowledge.search(list[queryIndex++ % list.length] as string)).length
  }, SEARCHES)
  let bareIndex = 0
  const bareSearch = await medianMicros(
    () => bare.search(list[bareIndex++ % list.length] as string),
    SEARCHES,
  )
  report(`${label}: search of ${ENTRIES} entries`, search, bareSearch, 'bare ranked FTS query')
  process.stdout.write(
    `${label}: ${(hits / (SEARCHES + SEARCHES / 10)).toFixed(1)} hits a search\n`,
  )
}

const scratch = await fs.mkdtemp(path.join(os.tmpdir(), 'eitri-bench-store-'))
try {
  // SQLite: eitri's store and, beside it, a bare file with the same pragmas.
  const file = path.join(scratch, 'store.sqlite')
  const bareFile = path.join(scratch, 'bare.sqlite')
  const bareDatabase = new DatabaseSync(bareFile)
  bareDatabase.exec('PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL')
  bareDatabase.exec('CREATE TABLE runs (id TEXT PRIMARY KEY, status TEXT, created_at TEXT)')
  bareDatabase.exec("INSERT INTO runs VALUES ('task', 'pending', '')")
  const insert = bareDatabase.prepare('INSERT INTO runs VALUES (?, ?, ?)')
  const change = bareDatabase.prepare("UPDATE runs SET status = ? WHERE id = 'task'")
  const sqliteSearch = new DatabaseSync(file)
  const searchStatement = () =>
    sqliteSearch.prepare(`SELECT v.title, snippet(knowledge_search, -1, '«', '»', '…', 16) AS s
      FROM knowledge_search JOIN knowledge_versions v ON v.sequence = knowledge_search.rowid
      WHERE knowledge_search MATCH ? ORDER BY bm25(knowledge_search, 5.0, 1.0) LIMIT 10`)
  {
    await using store = await openStore(`sqlite:${file}`)
    let prepared: ReturnType<typeof searchStatement> | undefined
    await measure('sqlite', store, {
      admit: async (index) => {
        insert.run(`r${index}`, 'running', new Date().toISOString())
      },
      update: async (index) => {
        change.run(index % 2 === 0 ? 'in-progress' : 'pending')
      },
      search: async (query) => {
        prepared ??= searchStatement()
        prepared.all(
          query
            .split(' ')
            .map((term) => `"${term}"`)
            .join(' OR '),
        )
      },
      settle: async () => undefined,
    })
  }
  sqliteSearch.close()
  bareDatabase.close()

  // PostgreSQL: a throwaway cluster with durable settings.
  await using cluster = await startPostgresCluster({ durable: true })
  const url = await cluster.createDatabase('bench')
  const bareUrl = await cluster.createDatabase('bare')
  const client = new pg.Client({ connectionString: bareUrl })
  await client.connect()
  await client.query('CREATE TABLE runs (id TEXT PRIMARY KEY, status TEXT, created_at TEXT)')
  await client.query("INSERT INTO runs VALUES ('task', 'pending', '')")
  const searchClient = new pg.Client({ connectionString: url })
  await searchClient.connect()
  {
    await using store = await openStore(url)
    await measure('postgres', store, {
      admit: async (index) => {
        await client.query('INSERT INTO runs VALUES ($1, $2, $3)', [
          `r${index}`,
          'running',
          new Date().toISOString(),
        ])
      },
      update: async (index) => {
        await client.query("UPDATE runs SET status = $1 WHERE id = 'task'", [
          index % 2 === 0 ? 'in-progress' : 'pending',
        ])
      },
      search: async (query) => {
        await searchClient.query(
          `SELECT title, ts_headline('english', title || ': ' || body, q, 'StartSel=«, StopSel=»') AS s
            FROM (SELECT v.title, v.body, q, ts_rank(v.search, q, 1) AS score
              FROM knowledge_versions v, to_tsquery('english', $1) q
              WHERE v.search @@ q ORDER BY score DESC LIMIT 10) best`,
          [query.split(' ').join(' | ')],
        )
      },
      // Autovacuum analyzes a table this size within a minute; the bench does not wait for it.
      settle: async () => {
        await searchClient.query('ANALYZE')
      },
    })
  }
  await client.end()
  await searchClient.end()
} finally {
  await fs.rm(scratch, { recursive: true, force: true })
}
process.stdout.write(
  `(the search figures are medians; admissions are sequential, one commit each)\n`,
)
