/**
 * @module store/sql/sql-runs
 * Run rows and their journals. Every write is one transaction, committed before its promise
 * resolves: a Run's row exists before it starts, and its end is durable before anyone hears.
 */
import { EitriError } from '../../errors/eitri-error.ts'
import {
  TERMINAL_RUN_STATUSES,
  type RunAdmission,
  type RunEvent,
  type RunEventInput,
  type RunFilter,
  type RunFinish,
  type RunRecord,
  type RunSettlement,
  type RunFinishStatus,
  type RunLeaseTerms,
} from '../run-record.ts'
import type { StoreDependencies } from '../store-dependencies.ts'
import { fromJsonColumn, toJsonColumn } from './json-column.ts'
import { runFromRow } from './run-rows.ts'
import type { SqlDriver, SqlTransaction, SqlValue } from './sql-driver.ts'

type CallOptions = { readonly signal?: AbortSignal | undefined }

const FINISH_STATUSES: readonly RunFinishStatus[] = ['waiting', 'completed', 'failed', 'cancelled']

const ADMISSION_COLUMNS = [
  'id',
  'kind',
  'parent_id',
  'caused_by',
  'actor',
  'trigger_data',
  'status',
  'roster',
  'agent_id',
  'agent_version',
  'program_kind',
  'interpreter_version',
  'agent_def_hash',
  'chat_id',
  'world',
  'isolation',
  'settlement_policy',
  'settlement_status',
  'created_at',
  'started_at',
  'updated_at',
  'lease_owner',
  'lease_expires_at',
  'admission',
] as const

/** Writes a new Run as running. */
export async function admitRun(
  driver: SqlDriver,
  dependencies: StoreDependencies,
  admission: RunAdmission,
  options: CallOptions = {},
): Promise<RunRecord> {
  if (typeof admission.id !== 'string' || admission.id.trim() === '') {
    throw new EitriError('invalid_input', 'A Run needs an id.')
  }
  if (admission.lease !== undefined) checkLeaseTerms(admission.lease)
  checkEvents(admission.events ?? [])
  return driver.transaction(
    'write',
    async (transaction) => {
      if ((await runRow(transaction, admission.id)) !== undefined) {
        throw new EitriError('conflict', `A Run with id ${admission.id} exists already.`)
      }
      const now = dependencies.now().toISOString()
      const values: SqlValue[] = [
        admission.id,
        admission.kind ?? 'agent-task',
        admission.parentId ?? null,
        JSON.stringify(admission.causedBy ?? []),
        admission.actor ?? null,
        toJsonColumn(admission.trigger),
        'running',
        admission.roster ?? null,
        admission.agentId ?? null,
        admission.agentVersion ?? null,
        admission.programKind ?? null,
        admission.interpreterVersion ?? null,
        admission.agentDefHash ?? null,
        admission.chatId ?? null,
        admission.world ?? null,
        admission.isolation ?? null,
        admission.settlementPolicy ?? null,
        'open',
        admission.createdAt ?? now,
        now,
        now,
        admission.lease?.owner ?? null,
        admission.lease === undefined ? null : leaseExpiry(now, admission.lease.ttlMs),
        // The store-wide sequence orders Runs admitted within one millisecond.
        ...(await transaction.nextSequences(1)),
      ]
      try {
        await transaction.run(
          `INSERT INTO runs (${ADMISSION_COLUMNS.join(', ')}) VALUES (${values.map(() => '?').join(', ')})`,
          values,
        )
      } catch (error) {
        if (isUniqueViolation(error)) {
          throw new EitriError('conflict', `A Run with id ${admission.id} exists already.`, {
            cause: error,
          })
        }
        throw error
      }
      if (admission.events !== undefined && admission.events.length > 0) {
        await insertRunEvents(transaction, admission.id, admission.events, now)
      }
      return runFromRow((await runRow(transaction, admission.id)) as Record<string, SqlValue>)
    },
    options,
  )
}

/** Writes a Run's finish status. */
export async function finishRun(
  driver: SqlDriver,
  dependencies: StoreDependencies,
  id: string,
  finish: RunFinish,
  options: CallOptions = {},
): Promise<RunRecord> {
  if (!FINISH_STATUSES.includes(finish.status)) {
    throw new EitriError(
      'invalid_input',
      `A Run finishes as waiting, completed, failed or cancelled (got ${JSON.stringify(finish.status)}).`,
    )
  }
  checkEvents(finish.events ?? [])
  return driver.transaction(
    'write',
    async (transaction) => {
      await requireUnendedRun(transaction, id, 'a finished Run never changes status')
      const now = dependencies.now().toISOString()
      // Its process holds it on until it is settled (a merge into main may wait for a person):
      // one that dies first leaves it to a person, through the sweep, never open for good.
      await transaction.run(
        `UPDATE runs SET status = ?, reason = ?, error = ?, value = ?, output = ?, updated_at = ?, ended_at = ?
          WHERE id = ?`,
        [
          finish.status,
          finish.reason ?? null,
          toJsonColumn(finish.error),
          toJsonColumn(finish.value),
          finish.output ?? null,
          now,
          finish.status === 'waiting' ? null : now,
          id,
        ],
      )
      if (finish.events !== undefined && finish.events.length > 0) {
        await insertRunEvents(transaction, id, finish.events, now)
      }
      return requireRun(transaction, id)
    },
    options,
  )
}

/** Records a Run's settlement. */
export async function settleRun(
  driver: SqlDriver,
  dependencies: StoreDependencies,
  id: string,
  settlement: RunSettlement,
  options: CallOptions = {},
): Promise<RunRecord> {
  if (!['merged', 'review', 'discarded'].includes(settlement.status)) {
    throw new EitriError(
      'invalid_input',
      `A settlement is merged, review or discarded (got ${JSON.stringify(settlement.status)}).`,
    )
  }
  return driver.transaction(
    'write',
    async (transaction) => {
      const current = await requireRun(transaction, id, { lock: true })
      if (current.settlementStatus === 'merged' || current.settlementStatus === 'discarded') {
        throw new EitriError(
          'conflict',
          `Run ${id} is already settled as ${current.settlementStatus}.`,
        )
      }
      // Settled: nobody holds it any more.
      await transaction.run(
        `UPDATE runs SET settlement_status = ?, settlement_reason = ?, updated_at = ?,
            lease_owner = NULL, lease_expires_at = NULL
          WHERE id = ?`,
        [settlement.status, settlement.reason, dependencies.now().toISOString(), id],
      )
      return requireRun(transaction, id)
    },
    options,
  )
}

/** One Run, or undefined. */
export function getRun(
  driver: SqlDriver,
  id: string,
  options: CallOptions = {},
): Promise<RunRecord | undefined> {
  return driver.transaction(
    'read',
    async (transaction) => {
      const row = await runRow(transaction, id)
      return row === undefined ? undefined : runFromRow(row)
    },
    options,
  )
}

/** Runs, newest first. */
export function listRuns(
  driver: SqlDriver,
  filter: RunFilter = {},
  options: CallOptions = {},
): Promise<RunRecord[]> {
  const where: string[] = []
  const parameters: SqlValue[] = []
  if (filter.status !== undefined) {
    where.push('status = ?')
    parameters.push(filter.status)
  }
  if (filter.parentId !== undefined) {
    where.push('parent_id = ?')
    parameters.push(filter.parentId)
  }
  const clause = where.length === 0 ? '' : ` WHERE ${where.join(' AND ')}`
  return driver.transaction(
    'read',
    async (transaction) =>
      (
        await transaction.all(
          `SELECT * FROM runs${clause} ORDER BY created_at DESC, admission DESC, id DESC LIMIT ?`,
          [...parameters, filter.limit ?? 100],
        )
      ).map(runFromRow),
    options,
  )
}

/** Appends events to a Run's journal. */
export async function appendRunEvents(
  driver: SqlDriver,
  dependencies: StoreDependencies,
  runId: string,
  events: readonly { readonly type: string; readonly data?: unknown }[],
  options: CallOptions & { readonly deferSync?: boolean | undefined } = {},
): Promise<RunEvent[]> {
  checkEvents(events)
  return driver.transaction(
    'write',
    async (transaction) => {
      await lockRun(transaction, runId)
      return insertRunEvents(transaction, runId, events, dependencies.now().toISOString())
    },
    options,
  )
}

/** Refuses an event without a type, before any transaction. */
export function checkEvents(events: readonly RunEventInput[]): void {
  for (const event of events) {
    if (typeof event.type !== 'string' || event.type === '') {
      throw new EitriError(
        'invalid_input',
        'Every Run event needs a type, such as tool-call-start.',
      )
    }
  }
}

/** Appends events to the journal of a Run the transaction has locked. */
export async function insertRunEvents(
  transaction: SqlTransaction,
  runId: string,
  events: readonly { readonly type: string; readonly data?: unknown }[],
  time: string,
  /** The journal's last sequence, when the caller has read it under the lock (0: empty). */
  lastSequence?: number,
): Promise<RunEvent[]> {
  if (events.length === 0) return []
  let sequence: number
  if (lastSequence !== undefined) sequence = lastSequence
  else {
    const last = await transaction.get<{ last: number | null }>(
      'SELECT MAX(sequence) AS last FROM run_events WHERE run_id = ?',
      [runId],
    )
    sequence = Number(last?.last ?? 0)
  }
  const stored = events.map((event): RunEvent => ({
    runId,
    sequence: (sequence += 1),
    type: event.type,
    data: event.data ?? null,
    time,
  }))
  await insertRows(
    transaction,
    'INSERT INTO run_events (run_id, sequence, type, data, time) VALUES',
    stored.map((event, index) => [
      runId,
      event.sequence,
      event.type,
      toJsonColumn((events[index] as { readonly data?: unknown }).data),
      time,
    ]),
  )
  return stored
}

/** Rows to insert with one statement per {@link ROWS_PER_INSERT} (a step's few are one). */
const ROWS_PER_INSERT = 64

/** Inserts `rows` with `insert` (`INSERT INTO t (columns) VALUES`), several rows a statement. */
export async function insertRows(
  transaction: SqlTransaction,
  insert: string,
  rows: readonly (readonly SqlValue[])[],
): Promise<void> {
  for (let start = 0; start < rows.length; start += ROWS_PER_INSERT) {
    const chunk = rows.slice(start, start + ROWS_PER_INSERT)
    const row = `(${(chunk[0] as readonly SqlValue[]).map(() => '?').join(', ')})`
    await transaction.run(`${insert} ${chunk.map(() => row).join(', ')}`, chunk.flat())
  }
}

/** Refuses lease terms with no owner or a duration that is not a positive number of ms. */
export function checkLeaseTerms(lease: RunLeaseTerms): void {
  if (typeof lease.owner !== 'string' || lease.owner.trim() === '') {
    throw new EitriError(
      'invalid_input',
      'A Run lease needs an owner: the id of the holding process.',
    )
  }
  if (!Number.isSafeInteger(lease.ttlMs) || lease.ttlMs <= 0) {
    throw new EitriError(
      'invalid_input',
      `A Run lease's ttlMs is a positive whole number of ms (got ${String(lease.ttlMs)}).`,
    )
  }
}

/** When a lease taken at `now` for `ttlMs` lapses, as ISO text. */
export function leaseExpiry(now: string, ttlMs: number): string {
  return new Date(Date.parse(now) + ttlMs).toISOString()
}

/** A Run's journal. */
export function listRunEvents(
  driver: SqlDriver,
  runId: string,
  filter: { readonly after?: number | undefined } = {},
  options: CallOptions = {},
): Promise<RunEvent[]> {
  return driver.transaction(
    'read',
    async (transaction) => {
      const rows = await transaction.all(
        'SELECT * FROM run_events WHERE run_id = ? AND sequence > ? ORDER BY sequence',
        [runId, filter.after ?? 0],
      )
      return rows.map((row) => ({
        runId: row['run_id'] as string,
        sequence: Number(row['sequence']),
        type: row['type'] as string,
        data: fromJsonColumn(row['data']),
        time: row['time'] as string,
      }))
    },
    options,
  )
}

/** The row of a Run, locked for the transaction on PostgreSQL when `lock`. */
export async function runRow(
  transaction: SqlTransaction,
  id: string,
  options: { readonly lock?: boolean } = {},
): Promise<Record<string, SqlValue> | undefined> {
  const lock = options.lock === true && transaction.dialect === 'postgres' ? ' FOR UPDATE' : ''
  return transaction.get(`SELECT * FROM runs WHERE id = ?${lock}`, [id])
}

/**
 * Locks a Run for appending to its journal (on PostgreSQL; SQLite's write transaction already
 * holds the only write lock) without reading its record: the id alone, so a step's write does
 * not fetch and decode the whole row. @throws EitriError `not_found`.
 */
export async function lockRun(transaction: SqlTransaction, id: string): Promise<void> {
  const lock = transaction.dialect === 'postgres' ? ' FOR UPDATE' : ''
  const row = await transaction.get(`SELECT id FROM runs WHERE id = ?${lock}`, [id])
  if (row === undefined) throw new EitriError('not_found', `No Run with id ${id}.`)
}

/** The record of a Run. @throws EitriError `not_found`. */
export async function requireRun(
  transaction: SqlTransaction,
  id: string,
  options: { readonly lock?: boolean } = {},
): Promise<RunRecord> {
  const row = await runRow(transaction, id, options)
  if (row === undefined) throw new EitriError('not_found', `No Run with id ${id}.`)
  return runFromRow(row)
}

/**
 * The record of a Run that has not ended, locked for the change. `ended` says why an ended Run
 * refuses it. @throws EitriError `not_found`; `conflict` when the Run ended.
 */
export async function requireUnendedRun(
  transaction: SqlTransaction,
  id: string,
  ended: string,
): Promise<RunRecord> {
  const current = await requireRun(transaction, id, { lock: true })
  if (TERMINAL_RUN_STATUSES.includes(current.status)) {
    throw new EitriError('conflict', `Run ${id} already ended as ${current.status}; ${ended}.`)
  }
  return current
}

function isUniqueViolation(error: unknown): boolean {
  const { code, errcode } = error as { code?: unknown; errcode?: unknown }
  return code === '23505' || (typeof errcode === 'number' && (errcode & 0xff) === 19)
}
