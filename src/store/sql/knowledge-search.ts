/**
 * @module store/sql/knowledge-search
 * Ranked full-text search over the entries a line sees: FTS5 with BM25 in SQLite, a
 * `tsvector` with `ts_rank` in PostgreSQL. Both match any of the words (stemmed), weigh the
 * title above the body, and mark matches in the snippet between « and ».
 */
import type { KnowledgeHit } from '../../ports/knowledge-base.ts'
import { visible, type LineChain } from './line-chain.ts'
import type { SqlTransaction } from './sql-driver.ts'

/** How much more a word in the title counts than one in the body (SQLite). */
const TITLE_WEIGHT = 5

/** A visible entry that matches, with the score its own text gives it. */
interface Candidate {
  readonly sequence: number
  readonly title: string
  readonly score: number
}

/**
 * SQLite: the latest versions the line sees that match any term, each scored by its own text
 * alone, as PostgreSQL's `ts_rank` does: each term found in the title counts
 * {@link TITLE_WEIGHT}, in the body 1, over 1 + ln(1 + the body's words). FTS5's `bm25()` is
 * not used: it weighs a term by how many rows of the whole index hold it, every line's and
 * every old version's, so the order of a line's own hits told which words the entries it
 * cannot see hold (decision 0053).
 */
async function visibleMatches(
  transaction: SqlTransaction,
  seen: ReturnType<typeof visible>,
  terms: readonly string[],
): Promise<Candidate[]> {
  const match = terms.map((term) => `"${term}"`).join(' OR ')
  // FTS5 must drive: the matches are found once (MATERIALIZED) and each is then looked up by
  // its sequence (CROSS JOIN fixes that order), rather than the planner scanning the line's
  // versions and querying the index for each.
  const rows = await transaction.all<{ sequence: number; title: string; body: string }>(
    `WITH matches AS MATERIALIZED (
        SELECT rowid AS sequence FROM knowledge_search WHERE knowledge_search MATCH ?
      )
      SELECT v.sequence AS sequence, v.title AS title, v.body AS body
        FROM matches m CROSS JOIN knowledge_versions v ON v.sequence = m.sequence
        WHERE ${seen.sql}`,
    [match, ...seen.parameters],
  )
  if (rows.length === 0) return []
  const candidates = JSON.stringify(rows.map((row) => row.sequence))
  const weights = new Map<number, number>()
  for (const term of terms) {
    for (const [column, weight] of [
      ['title', TITLE_WEIGHT],
      ['body', 1],
    ] as const) {
      // Which of the visible matches hold the term (stemmed as the index stems it) there.
      const holding = await transaction.all<{ sequence: number }>(
        `SELECT rowid AS sequence FROM knowledge_search
          WHERE knowledge_search MATCH ? AND rowid IN (SELECT value FROM json_each(?))`,
        [`${column} : "${term}"`, candidates],
      )
      for (const { sequence } of holding) {
        weights.set(sequence, (weights.get(sequence) ?? 0) + weight)
      }
    }
  }
  return rows.map((row) => ({
    sequence: row.sequence,
    title: row.title,
    score: (weights.get(row.sequence) ?? 0) / (1 + Math.log1p(wordCount(row.body))),
  }))
}

/** The words of a text, as the index's tokenizer splits them (letters and digits). */
function wordCount(text: string): number {
  return text.match(/[\p{L}\p{N}]+/gu)?.length ?? 0
}

/** Titles in the order SQLite's `ORDER BY title` gives them (bytes of UTF-8, BINARY). */
function compareTitles(a: Candidate, b: Candidate): number {
  return Buffer.compare(Buffer.from(a.title), Buffer.from(b.title))
}

/** The best `limit` entries for `terms` (letters and digits only, so safe in both syntaxes). */
export async function searchKnowledge(
  transaction: SqlTransaction,
  chain: LineChain,
  terms: readonly string[],
  limit: number,
): Promise<KnowledgeHit[]> {
  const seen = visible('knowledge_versions', 'v', 'key', chain)
  if (transaction.dialect === 'sqlite') {
    const candidates = await visibleMatches(transaction, seen, terms)
    const ranked = candidates
      .sort((a, b) => b.score - a.score || compareTitles(a, b))
      .slice(0, limit)
    const match = terms.map((term) => `"${term}"`).join(' OR ')
    const hits: KnowledgeHit[] = []
    for (const row of ranked) {
      // The snippet is costly, so it is made only for the rows that made the cut.
      const extract = await transaction.get<{ snippet: string }>(
        `SELECT snippet(knowledge_search, -1, '«', '»', '…', 16) AS snippet
          FROM knowledge_search WHERE knowledge_search MATCH ? AND rowid = ?`,
        [match, row.sequence],
      )
      hits.push({ title: row.title, snippet: extract?.snippet ?? '', score: row.score })
    }
    return hits
  }
  // The headline is costly, so it is made only for the rows that made the cut.
  const rows = await transaction.all<{ title: string; snippet: string; score: number }>(
    `SELECT best.title AS title, best.score AS score,
        ts_headline('english', best.title || ': ' || best.body, best.query,
          'StartSel=«, StopSel=», MinWords=8, MaxWords=24, MaxFragments=1, FragmentDelimiter=…') AS snippet
      FROM (
        SELECT v.title, v.body, q.query, ts_rank(v.search, q.query, 1) AS score
          FROM knowledge_versions v, to_tsquery('english', ?) AS q(query)
          WHERE v.search @@ q.query AND ${seen.sql}
          ORDER BY score DESC, v.title
          LIMIT ?
      ) best
      ORDER BY best.score DESC, best.title`,
    [terms.join(' | '), ...seen.parameters, limit],
  )
  return rows.map((row) => ({ title: row.title, snippet: row.snippet, score: Number(row.score) }))
}
