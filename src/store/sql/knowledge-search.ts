/**
 * @module store/sql/knowledge-search
 * Ranked full-text search over the entries a line sees: FTS5 with BM25 in SQLite, a
 * `tsvector` with `ts_rank` in PostgreSQL. Both match any of the words (stemmed), weigh the
 * title above the body, and mark matches in the snippet between « and ».
 */
import type { KnowledgeHit } from '../../ports/knowledge-base.ts'
import { visible, type LineChain } from './line-chain.ts'
import type { SqlTransaction } from './sql-driver.ts'

/** How much more a match in the title counts than one in the body (SQLite's BM25). */
const TITLE_WEIGHT = 5

/** The best `limit` entries for `terms` (letters and digits only, so safe in both syntaxes). */
export async function searchKnowledge(
  transaction: SqlTransaction,
  chain: LineChain,
  terms: readonly string[],
  limit: number,
): Promise<KnowledgeHit[]> {
  const seen = visible('knowledge_versions', 'v', 'key', chain)
  if (transaction.dialect === 'sqlite') {
    // FTS5 must drive: the matches are ranked once (MATERIALIZED) and each is then looked up
    // by its sequence (CROSS JOIN fixes that order), rather than the planner scanning the
    // line's versions and querying the index for each.
    const match = terms.map((term) => `"${term}"`).join(' OR ')
    const rows = await transaction.all<{ sequence: number; title: string; rank: number }>(
      `WITH matches AS MATERIALIZED (
          SELECT rowid AS sequence, bm25(knowledge_search, ${TITLE_WEIGHT}, 1.0) AS rank
            FROM knowledge_search WHERE knowledge_search MATCH ?
        )
        SELECT v.sequence AS sequence, v.title AS title, m.rank AS rank
          FROM matches m CROSS JOIN knowledge_versions v ON v.sequence = m.sequence
          WHERE ${seen.sql}
          ORDER BY m.rank, v.title
          LIMIT ?`,
      [match, ...seen.parameters, limit],
    )
    const hits: KnowledgeHit[] = []
    for (const row of rows) {
      // The snippet is costly, so it is made only for the rows that made the cut.
      const extract = await transaction.get<{ snippet: string }>(
        `SELECT snippet(knowledge_search, -1, '«', '»', '…', 16) AS snippet
          FROM knowledge_search WHERE knowledge_search MATCH ? AND rowid = ?`,
        [match, row.sequence],
      )
      hits.push({ title: row.title, snippet: extract?.snippet ?? '', score: -row.rank })
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
