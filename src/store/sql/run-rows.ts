/**
 * @module store/sql/run-rows
 * Between `runs` rows and RunRecords.
 */
import type { RunRecord, RunStatus, SettlementStatus } from '../run-record.ts'
import { fromJsonColumn } from './json-column.ts'
import type { SqlRow } from './sql-driver.ts'

/** The record of a `runs` row; absent provenance, lease and cancel request stay absent. */
export function runFromRow(row: SqlRow): RunRecord {
  const text = (column: string): string | null => (row[column] as string | null) ?? null
  const provenance = {
    roster: text('roster'),
    agentId: text('agent_id'),
    agentVersion: row['agent_version'] === null ? null : Number(row['agent_version']),
    programKind: text('program_kind'),
    interpreterVersion:
      row['interpreter_version'] === null ? null : Number(row['interpreter_version']),
    agentDefHash: text('agent_def_hash'),
    chatId: text('chat_id'),
    world: text('world'),
    isolation: text('isolation'),
    settlementPolicy: text('settlement_policy'),
  }
  const holding = {
    leaseOwner: text('lease_owner'),
    leaseExpiresAt: text('lease_expires_at'),
    cancelRequestedAt: text('cancel_requested_at'),
    cancelRequestedBy: text('cancel_requested_by'),
  }
  return {
    id: row['id'] as string,
    kind: row['kind'] as string,
    parentId: text('parent_id'),
    causedBy: fromJsonColumn(row['caused_by']) as string[],
    actor: text('actor'),
    trigger: fromJsonColumn(row['trigger_data']),
    status: row['status'] as RunStatus,
    reason: text('reason'),
    error: fromJsonColumn(row['error']),
    value: fromJsonColumn(row['value']),
    output: text('output'),
    settlementStatus: row['settlement_status'] as SettlementStatus,
    settlementReason: text('settlement_reason'),
    createdAt: row['created_at'] as string,
    startedAt: row['started_at'] as string,
    updatedAt: row['updated_at'] as string,
    endedAt: text('ended_at'),
    ...Object.fromEntries(
      Object.entries({ ...provenance, ...holding }).filter(([, value]) => value !== null),
    ),
  }
}
