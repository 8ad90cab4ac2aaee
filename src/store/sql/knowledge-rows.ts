/**
 * @module store/sql/knowledge-rows
 * Writing knowledge versions and their links, many rows per statement.
 */
import { titleKey } from '../knowledge-text.ts'
import type { SqlTransaction, SqlValue } from './sql-driver.ts'

/** One stored version of an entry. */
export interface KnowledgeVersion {
  readonly sequence: number
  readonly line: string
  readonly key: string
  readonly title: string
  readonly body: string
  readonly links: readonly string[]
  readonly createdAt: string
  readonly updatedAt: string
}

/** Rows per INSERT: well under both backends' parameter limits. */
const ROWS_PER_INSERT = 200

/** Inserts versions (each on its own `line`) and their links. */
export async function insertKnowledgeVersions(
  transaction: SqlTransaction,
  versions: readonly KnowledgeVersion[],
): Promise<void> {
  await insertRows(
    transaction,
    'knowledge_versions (sequence, line, key, title, body, created_at, updated_at)',
    versions.map((version) => [
      version.sequence,
      version.line,
      version.key,
      version.title,
      version.body,
      version.createdAt,
      version.updatedAt,
    ]),
  )
  await insertRows(
    transaction,
    'knowledge_links (version_sequence, position, target_key, target_title)',
    versions.flatMap((version) =>
      version.links.map((title, position): SqlValue[] => [
        version.sequence,
        position,
        titleKey(title),
        title,
      ]),
    ),
  )
}

async function insertRows(
  transaction: SqlTransaction,
  target: string,
  rows: readonly SqlValue[][],
): Promise<void> {
  for (let start = 0; start < rows.length; start += ROWS_PER_INSERT) {
    const batch = rows.slice(start, start + ROWS_PER_INSERT)
    const placeholders = batch.map((row) => `(${row.map(() => '?').join(', ')})`).join(', ')
    await transaction.run(`INSERT INTO ${target} VALUES ${placeholders}`, batch.flat())
  }
}
