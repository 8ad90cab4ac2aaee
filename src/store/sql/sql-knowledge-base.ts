/**
 * @module store/sql/sql-knowledge-base
 * The knowledge of one line over SQL. Like tasks, every upsert is a new immutable version;
 * the `[[links]]` of a version are rows keyed by its sequence, so they follow it into forks
 * and merges. Search runs on FTS5 (SQLite) or a `tsvector` (PostgreSQL).
 */
import { EitriError } from '../../errors/eitri-error.ts'
import type {
  KnowledgeBase,
  KnowledgeEntry,
  KnowledgeHit,
  KnowledgeWrite,
} from '../../ports/knowledge-base.ts'
import {
  MAX_TITLE_CHARS,
  mentionedTitles,
  queryTerms,
  tidyTitle,
  titleKey,
} from '../knowledge-text.ts'
import type { StoreDependencies } from '../store-dependencies.ts'
import { latestVersions, readLineChain, visible, type LineChain } from './line-chain.ts'
import { insertKnowledgeVersions, type KnowledgeVersion } from './knowledge-rows.ts'
import { searchKnowledge } from './knowledge-search.ts'
import type { SqlDriver, SqlRow, SqlTransaction } from './sql-driver.ts'

/** Keys looked up per statement. */
const KEYS_PER_QUERY = 200
/** Most results a search returns. */
export const MAX_SEARCH_LIMIT = 100

/** The knowledge of `line` in the database behind `driver`. */
export function sqlKnowledgeBase(
  driver: SqlDriver,
  line: string,
  dependencies: StoreDependencies,
): KnowledgeBase {
  const addMany: KnowledgeBase['addMany'] = async (entries, options = {}) => {
    const checked = entries.map((entry) => checkEntry(entry.title, entry.body))
    if (checked.length === 0) return []
    return driver.transaction(
      'write',
      async (transaction) => {
        const chain = await readLineChain(transaction, line, { lock: true })
        const existing = await visibleEntries(
          transaction,
          chain,
          checked.map((entry) => entry.key),
        )
        const now = dependencies.now().toISOString()
        const sequences = await transaction.nextSequences(checked.length)
        const writes: KnowledgeWrite[] = []
        const versions: KnowledgeVersion[] = checked.map((entry, index) => {
          const before = existing.get(entry.key)
          const version: KnowledgeVersion = {
            sequence: sequences[index] as number,
            line,
            key: entry.key,
            title: entry.title,
            body: entry.body,
            links: mentionedTitles(entry.body).filter((title) => titleKey(title) !== entry.key),
            createdAt: before?.createdAt ?? now,
            updatedAt: now,
          }
          existing.set(entry.key, version)
          writes.push({ entry: publicEntry(version), created: before === undefined })
          return version
        })
        await insertKnowledgeVersions(transaction, versions)
        return writes
      },
      options,
    )
  }

  return {
    line,
    addMany,
    async add(entry, options) {
      const [write] = await addMany([entry], options)
      return write as KnowledgeWrite
    },
    async get(title, options = {}) {
      return driver.transaction(
        'read',
        async (transaction) => {
          const chain = await readLineChain(transaction, line)
          const found = (await visibleEntries(transaction, chain, [titleKey(title)]))
            .values()
            .next()
          return found.done === true ? undefined : publicEntry(found.value)
        },
        options,
      )
    },
    async search(query, options = {}) {
      const limit = options.limit ?? 10
      if (!Number.isInteger(limit) || limit < 1 || limit > MAX_SEARCH_LIMIT) {
        throw new EitriError(
          'invalid_input',
          `limit must be a whole number from 1 to ${MAX_SEARCH_LIMIT} (got ${limit}).`,
        )
      }
      const terms = queryTerms(query)
      if (terms.length === 0) return []
      return driver.transaction(
        'read',
        async (transaction): Promise<KnowledgeHit[]> => {
          const chain = await readLineChain(transaction, line)
          return searchKnowledge(transaction, chain, terms, limit)
        },
        options,
      )
    },
    async links(title, options = {}) {
      const key = titleKey(title)
      return driver.transaction(
        'read',
        async (transaction) => {
          const chain = await readLineChain(transaction, line)
          const entry = (await visibleEntries(transaction, chain, [key])).get(key)
          const out = entry?.links ?? []
          const present = await visibleEntries(transaction, chain, out.map(titleKey))
          const seen = visible('knowledge_versions', 'v', 'key', chain)
          const back = await transaction.all<{ title: string }>(
            `SELECT DISTINCT v.title FROM knowledge_links l
              JOIN knowledge_versions v ON v.sequence = l.version_sequence
              WHERE l.target_key = ? AND ${seen.sql} ORDER BY v.title`,
            [key, ...seen.parameters],
          )
          return {
            title: entry?.title ?? tidyTitle(title),
            exists: entry !== undefined,
            out: out.map((target) => ({ title: target, exists: present.has(titleKey(target)) })),
            back: back.map((row) => row.title),
          }
        },
        options,
      )
    },
  }
}

/** The visible entries of `keys` on the chain, by key, with their links. */
async function visibleEntries(
  transaction: SqlTransaction,
  chain: LineChain,
  keys: readonly string[],
): Promise<Map<string, KnowledgeVersion>> {
  const found = new Map<string, KnowledgeVersion>()
  const unique = [...new Set(keys)]
  for (let start = 0; start < unique.length; start += KEYS_PER_QUERY) {
    const batch = unique.slice(start, start + KEYS_PER_QUERY)
    const latest = latestVersions('knowledge_versions', 'key', chain, {
      sql: `v.key IN (${batch.map(() => '?').join(', ')})`,
      parameters: batch,
    })
    const rows = await transaction.all(
      `SELECT latest.sequence, latest.line, latest.key, latest.title, latest.body,
          latest.created_at, latest.updated_at
        FROM ${latest.sql} WHERE latest.version_rank = 1`,
      latest.parameters,
    )
    const links = await linksOf(
      transaction,
      rows.map((row) => Number(row['sequence'])),
    )
    for (const row of rows) {
      const sequence = Number(row['sequence'])
      found.set(row['key'] as string, versionFromRow(row, links.get(sequence) ?? []))
    }
  }
  return found
}

async function linksOf(
  transaction: SqlTransaction,
  sequences: readonly number[],
): Promise<Map<number, string[]>> {
  const links = new Map<number, string[]>()
  if (sequences.length === 0) return links
  const rows = await transaction.all<{ version_sequence: number; target_title: string }>(
    `SELECT version_sequence, target_title FROM knowledge_links
      WHERE version_sequence IN (${sequences.map(() => '?').join(', ')})
      ORDER BY version_sequence, position`,
    [...sequences],
  )
  for (const row of rows) {
    const sequence = Number(row.version_sequence)
    links.set(sequence, [...(links.get(sequence) ?? []), row.target_title])
  }
  return links
}

function versionFromRow(row: SqlRow, links: string[]): KnowledgeVersion {
  return {
    sequence: Number(row['sequence']),
    line: row['line'] as string,
    key: row['key'] as string,
    title: row['title'] as string,
    body: row['body'] as string,
    links,
    createdAt: row['created_at'] as string,
    updatedAt: row['updated_at'] as string,
  }
}

function publicEntry(version: KnowledgeVersion): KnowledgeEntry {
  return {
    title: version.title,
    body: version.body,
    links: version.links,
    createdAt: version.createdAt,
    updatedAt: version.updatedAt,
  }
}

function checkEntry(title: unknown, body: unknown): { key: string; title: string; body: string } {
  if (typeof title !== 'string' || tidyTitle(title) === '') {
    throw new EitriError(
      'invalid_input',
      'A knowledge entry needs a title: the entity it is about.',
    )
  }
  if (tidyTitle(title).length > MAX_TITLE_CHARS) {
    throw new EitriError(
      'invalid_input',
      `A knowledge title is at most ${MAX_TITLE_CHARS} characters; put the detail in the body.`,
    )
  }
  if (typeof body !== 'string') {
    throw new EitriError('invalid_input', 'A knowledge entry needs a body (text).')
  }
  return { key: titleKey(title), title: tidyTitle(title), body }
}
