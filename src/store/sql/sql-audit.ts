/**
 * @module store/sql/sql-audit
 * The append-only approval and receipt logs.
 */
import type {
  ApprovalEntry,
  ApprovalRecord,
  AuditFilter,
  ReceiptEntry,
  ReceiptRecord,
} from '../audit-records.ts'
import { fromJsonColumn, toJsonColumn } from './json-column.ts'
import type { SqlDriver, SqlRow, SqlValue } from './sql-driver.ts'

type CallOptions = { readonly signal?: AbortSignal | undefined }

/** Appends one decision. */
export function recordApproval(
  driver: SqlDriver,
  entry: ApprovalEntry,
  options: CallOptions = {},
): Promise<ApprovalRecord> {
  return append(
    driver,
    'approvals',
    {
      time: entry.time,
      tool: entry.tool,
      input_digest: entry.inputDigest,
      decision: entry.decision,
      decided_by: entry.by,
      summary: entry.summary ?? null,
      reason: entry.reason ?? null,
      access: entry.access ?? null,
      dangerous: entry.dangerous === undefined ? null : entry.dangerous ? 1 : 0,
      run_id: entry.runId ?? null,
      line: entry.line ?? null,
      details: toJsonColumn(entry.details),
    },
    options,
  ).then(approvalFromRow)
}

/** Decisions in the order recorded. */
export async function listApprovals(
  driver: SqlDriver,
  filter: AuditFilter = {},
  options: CallOptions = {},
): Promise<ApprovalRecord[]> {
  return (await list(driver, 'approvals', filter, options)).map(approvalFromRow)
}

/** Appends one receipt. */
export function recordReceipt(
  driver: SqlDriver,
  entry: ReceiptEntry,
  options: CallOptions = {},
): Promise<ReceiptRecord> {
  return append(
    driver,
    'receipts',
    {
      time: entry.time,
      kind: entry.kind,
      tool: entry.tool ?? null,
      run_id: entry.runId ?? null,
      line: entry.line ?? null,
      digest: entry.digest ?? null,
      details: toJsonColumn(entry.details),
    },
    options,
  ).then(receiptFromRow)
}

/** Receipts in the order recorded. */
export async function listReceipts(
  driver: SqlDriver,
  filter: AuditFilter = {},
  options: CallOptions = {},
): Promise<ReceiptRecord[]> {
  return (await list(driver, 'receipts', filter, options)).map(receiptFromRow)
}

function append(
  driver: SqlDriver,
  table: 'approvals' | 'receipts',
  row: Record<string, SqlValue>,
  options: CallOptions,
): Promise<SqlRow> {
  const columns = Object.keys(row)
  return driver.transaction(
    'write',
    async (transaction) =>
      (await transaction.get(
        `INSERT INTO ${table} (${columns.join(', ')}) VALUES (${columns.map(() => '?').join(', ')}) RETURNING *`,
        Object.values(row),
      )) as SqlRow,
    options,
  )
}

function list(
  driver: SqlDriver,
  table: 'approvals' | 'receipts',
  filter: AuditFilter,
  options: CallOptions,
): Promise<SqlRow[]> {
  const where = ['sequence > ?']
  const parameters: SqlValue[] = [filter.after ?? 0]
  if (filter.tool !== undefined) {
    where.push('tool = ?')
    parameters.push(filter.tool)
  }
  if (filter.runId !== undefined) {
    where.push('run_id = ?')
    parameters.push(filter.runId)
  }
  return driver.transaction(
    'read',
    (transaction) =>
      transaction.all(
        `SELECT * FROM ${table} WHERE ${where.join(' AND ')} ORDER BY sequence LIMIT ?`,
        [...parameters, filter.limit ?? 1000],
      ),
    options,
  )
}

function optional<T>(value: SqlValue | undefined, convert: (value: SqlValue) => T): T | undefined {
  return value === null || value === undefined ? undefined : convert(value)
}

function approvalFromRow(row: SqlRow): ApprovalRecord {
  return withoutUndefined({
    sequence: Number(row['sequence']),
    time: row['time'] as string,
    tool: row['tool'] as string,
    inputDigest: row['input_digest'] as string,
    decision: row['decision'] as ApprovalRecord['decision'],
    by: row['decided_by'] as string,
    summary: optional(row['summary'], String),
    reason: optional(row['reason'], String),
    access: optional(row['access'], String),
    dangerous: optional(row['dangerous'], (value) => Number(value) === 1),
    runId: optional(row['run_id'], String),
    line: optional(row['line'], String),
    details: optional(row['details'], fromJsonColumn),
  })
}

function receiptFromRow(row: SqlRow): ReceiptRecord {
  return withoutUndefined({
    sequence: Number(row['sequence']),
    time: row['time'] as string,
    kind: row['kind'] as string,
    tool: optional(row['tool'], String),
    runId: optional(row['run_id'], String),
    line: optional(row['line'], String),
    digest: optional(row['digest'], String),
    details: optional(row['details'], fromJsonColumn),
  })
}

/** Drops absent fields, so records compare equal to what was written. */
function withoutUndefined<T extends object>(record: T): T {
  return Object.fromEntries(Object.entries(record).filter(([, value]) => value !== undefined)) as T
}
