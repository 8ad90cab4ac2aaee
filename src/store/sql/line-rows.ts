/**
 * @module store/sql/line-rows
 * Between `lines` rows and LineRecords.
 */
import type { LineRecord, LineState } from '../line-record.ts'
import type { SqlRow } from './sql-driver.ts'

/** A row of `lines`. */
export type LineRow = SqlRow

/** The record of a `lines` row. */
export function lineFromRow(row: LineRow): LineRecord {
  return {
    name: row['name'] as string,
    parent: (row['parent'] as string | null) ?? null,
    forkSequence: Number(row['fork_sequence']),
    state: row['state'] as LineState,
    createdAt: row['created_at'] as string,
    closedAt: (row['closed_at'] as string | null) ?? null,
  }
}
