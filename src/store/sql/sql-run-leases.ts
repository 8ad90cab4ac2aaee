/**
 * @module store/sql/sql-run-leases
 * Who holds each running Run. A process holds its Runs through a lease it renews; when the
 * process dies the lease lapses, and any process with the store open sweeps the Run to
 * `failed`/`interrupted` so it is never left `running` forever. A process that cannot reach a
 * Run's owner leaves a durable cancel request the owner polls for.
 */
import { EitriError } from '../../errors/eitri-error.ts'
import {
  INTERRUPTED_REASON,
  SETTLEMENT_INTERRUPTED_REASON,
  UNKNOWN_OUTCOME_REASON,
  type RunCancelRequest,
  type RunLeaseTerms,
  type RunRecord,
} from '../run-record.ts'
import type { StoreDependencies } from '../store-dependencies.ts'
import { toJsonColumn } from './json-column.ts'
import { runFromRow } from './run-rows.ts'
import type { SqlDriver, SqlTransaction } from './sql-driver.ts'
import {
  checkLeaseTerms,
  insertRunEvents,
  leaseExpiry,
  requireRun,
  requireUnendedRun,
} from './sql-runs.ts'

type CallOptions = { readonly signal?: AbortSignal | undefined }

/** How long a running Run nobody ever held may sit unchanged before a sweep ends it. */
export const UNLEASED_RUN_GRACE_MS = 15_000

/** Takes the lease of a running Run that nobody else holds. */
export async function holdRun(
  driver: SqlDriver,
  dependencies: StoreDependencies,
  id: string,
  lease: RunLeaseTerms,
  options: CallOptions = {},
): Promise<RunRecord> {
  checkLeaseTerms(lease)
  return driver.transaction(
    'write',
    async (transaction) => {
      const current = await requireRun(transaction, id, { lock: true })
      if (current.status !== 'running') {
        throw new EitriError(
          'conflict',
          `Run ${id} is ${current.status}; only a running Run can be held.`,
        )
      }
      if (current.leaseOwner !== undefined && current.leaseOwner !== lease.owner) {
        throw new EitriError(
          'conflict',
          `Run ${id} is held by ${current.leaseOwner}; a Run has one owner. Ask that owner to cancel it (requestRunCancel) instead.`,
        )
      }
      const now = dependencies.now().toISOString()
      await transaction.run('UPDATE runs SET lease_owner = ?, lease_expires_at = ? WHERE id = ?', [
        lease.owner,
        leaseExpiry(now, lease.ttlMs),
        id,
      ])
      return requireRun(transaction, id)
    },
    options,
  )
}

/** Extends every running Run `lease.owner` holds; answers their ids. */
export async function renewRunLeases(
  driver: SqlDriver,
  dependencies: StoreDependencies,
  lease: RunLeaseTerms,
  options: CallOptions = {},
): Promise<string[]> {
  checkLeaseTerms(lease)
  return driver.transaction(
    'write',
    async (transaction) => {
      const expiresAt = leaseExpiry(dependencies.now().toISOString(), lease.ttlMs)
      // A Run is held until it is settled (its process may be asking a person about a merge).
      // A sweep lets go of the lease of what it sweeps, which fences it: no heartbeat revives it.
      const rows = await transaction.all<{ id: string }>(
        `UPDATE runs SET lease_expires_at = ? WHERE lease_owner = ? AND settlement_status = 'open' RETURNING id`,
        [expiresAt, lease.owner],
      )
      return rows.map((row) => row.id).sort()
    },
    options,
  )
}

/**
 * Ends the leases of `owner` (all of them, or those of `ids`) now, so a Run it still held
 * counts as interrupted at the next sweep. Never touches another owner's Runs.
 */
export async function releaseRunLeases(
  driver: SqlDriver,
  dependencies: StoreDependencies,
  owner: string,
  ids: readonly string[] | undefined,
  options: CallOptions = {},
): Promise<string[]> {
  checkLeaseTerms({ owner, ttlMs: 1 })
  return driver.transaction(
    'write',
    async (transaction) => {
      const now = dependencies.now().toISOString()
      const only = ids === undefined ? '' : ` AND id IN (${ids.map(() => '?').join(', ')})`
      if (ids !== undefined && ids.length === 0) return []
      const rows = await transaction.all<{ id: string }>(
        `UPDATE runs SET lease_expires_at = ? WHERE lease_owner = ? AND settlement_status = 'open'${only} RETURNING id`,
        [now, owner, ...(ids ?? [])],
      )
      return rows.map((row) => row.id).sort()
    },
    options,
  )
}

/**
 * Marks `failed` with reason `interrupted` every running Run whose lease lapsed (or, never
 * held, that has not changed for `unleasedAfterMs`), keeps its world for review and journals
 * its `finished` event, in one transaction; in the same one keeps for review every ended Run
 * whose lease lapsed before it was settled. Answers the Runs it ended.
 */
export async function sweepInterruptedRuns(
  driver: SqlDriver,
  dependencies: StoreDependencies,
  options: CallOptions & { readonly unleasedAfterMs?: number | undefined } = {},
): Promise<RunRecord[]> {
  const grace = options.unleasedAfterMs ?? UNLEASED_RUN_GRACE_MS
  if (!Number.isSafeInteger(grace) || grace < 0) {
    throw new EitriError(
      'invalid_input',
      `unleasedAfterMs is a whole number of ms, 0 or more (got ${String(grace)}).`,
    )
  }
  return driver.transaction(
    'write',
    async (transaction) => {
      const now = dependencies.now().toISOString()
      const cutoff = new Date(Date.parse(now) - grace).toISOString()
      const lapsed = `status = 'running' AND (lease_expires_at < ? OR (lease_expires_at IS NULL AND updated_at < ?))`
      // On PostgreSQL, FOR UPDATE waits for a heartbeat in flight and re-reads the row after
      // it, so a lease renewed at the last moment is seen renewed and the Run left alone.
      const lock = transaction.dialect === 'postgres' ? ' FOR UPDATE' : ''
      const rows = await transaction.all(`SELECT * FROM runs WHERE ${lapsed} ORDER BY id${lock}`, [
        now,
        cutoff,
      ])
      const ended: RunRecord[] = []
      for (const row of rows) {
        const run = runFromRow(row)
        if (await interrupt(transaction, run, now, lapsed, cutoff)) {
          ended.push(await requireRun(transaction, run.id))
        }
      }
      await leaveUnsettledToPerson(transaction, now)
      return ended
    },
    options,
  )
}

/**
 * A Run that ended but whose process died before settling it (a merge into main waiting for a
 * person's answer when the server was killed) is kept for review: a person merges or discards
 * it (`eitri runs merge|discard`), as any Run kept for review. Without this it stayed open for
 * good, which nothing may settle.
 */
async function leaveUnsettledToPerson(transaction: SqlTransaction, now: string): Promise<void> {
  // Held Runs only (a lease owner is never empty), through runs_lease_owner: a sweep runs at
  // every listing and wait, and settled Runs, nearly all of them, hold no lease.
  const unsettled = `lease_owner > '' AND status <> 'running' AND settlement_status = 'open' AND lease_expires_at < ?`
  // PostgreSQL locks the rows in one order, so sweeps at once never deadlock; SQLite has one writer.
  const lock = transaction.dialect === 'postgres' ? ' ORDER BY id FOR UPDATE' : ''
  const rows = await transaction.all(`SELECT * FROM runs WHERE ${unsettled}${lock}`, [now])
  for (const row of rows) {
    const run = runFromRow(row)
    await transaction.run(
      `UPDATE runs SET settlement_status = 'review', settlement_reason = ?, updated_at = ?,
          lease_owner = NULL, lease_expires_at = NULL
        WHERE id = ? AND ${unsettled}`,
      [
        `${SETTLEMENT_INTERRUPTED_REASON}: its process (${run.leaseOwner ?? '?'}) stopped renewing its lease before the Run's world was settled; look at the world, then merge or discard it (eitri runs merge|discard ${run.id})`,
        now,
        run.id,
        now,
      ],
    )
  }
}

async function interrupt(
  transaction: SqlTransaction,
  run: RunRecord,
  now: string,
  lapsed: string,
  cutoff: string,
): Promise<boolean> {
  const holder =
    run.leaseOwner === undefined
      ? 'No process held it'
      : `Its process (${run.leaseOwner}) stopped renewing its lease, which lapsed at ${run.leaseExpiresAt ?? '?'}`
  // A journal ending on an intent means an effect started whose outcome nobody recorded.
  const last = await transaction.get<{ type: string }>(
    `SELECT type FROM run_events WHERE run_id = ? AND (type LIKE '%-intent' OR type LIKE '%-result')
      ORDER BY sequence DESC LIMIT 1`,
    [run.id],
  )
  const pending = last?.type.endsWith('-intent') === true ? last.type : undefined
  const reason = pending === undefined ? INTERRUPTED_REASON : UNKNOWN_OUTCOME_REASON
  const error = {
    code: reason,
    message:
      pending === undefined
        ? `Run ${run.id} was interrupted: ${holder}, so it cannot finish (the process was killed, crashed or lost power). Hire it again to redo the work.`
        : `Run ${run.id} was interrupted in the middle of an effect (its journal ends on a ${pending} with no result): ${holder}. Whether that effect happened is unknown, so it was not re-run; check the Run's world and journal before hiring it again.`,
  }
  // Its world is kept for a person: the process that would settle it is gone (or has lost it),
  // and what it did before it stopped may be worth a look (an unknown outcome above all).
  const settlement = `${reason}: the Run's process stopped before the Run ended; look at its world and journal, then merge or discard it (eitri runs merge|discard ${run.id})`
  const changed = await transaction.run(
    `UPDATE runs SET status = 'failed', reason = ?, error = ?, updated_at = ?, ended_at = ?,
        lease_owner = NULL, lease_expires_at = NULL,
        settlement_status = 'review', settlement_reason = ?
      WHERE id = ? AND ${lapsed}`,
    [reason, toJsonColumn(error), now, now, settlement, run.id, now, cutoff],
  )
  if (changed === 0) return false
  await insertRunEvents(
    transaction,
    run.id,
    [{ type: 'finished', data: { status: 'failed', reason } }],
    now,
  )
  return true
}

/**
 * Leaves a durable request, for whoever holds the Run, to cancel it, and journals a
 * `cancel-requested` event. Asking again changes nothing.
 */
export async function requestRunCancel(
  driver: SqlDriver,
  dependencies: StoreDependencies,
  id: string,
  by: string,
  options: CallOptions = {},
): Promise<RunRecord> {
  if (typeof by !== 'string' || by.trim() === '') {
    throw new EitriError('invalid_input', 'A cancel request names who asks (by).')
  }
  return driver.transaction(
    'write',
    async (transaction) => {
      const current = await requireUnendedRun(transaction, id, 'there is nothing to cancel')
      if (current.cancelRequestedAt !== undefined) return current
      const now = dependencies.now().toISOString()
      await transaction.run(
        'UPDATE runs SET cancel_requested_at = ?, cancel_requested_by = ? WHERE id = ?',
        [now, by, id],
      )
      await insertRunEvents(transaction, id, [{ type: 'cancel-requested', data: { by } }], now)
      return requireRun(transaction, id)
    },
    options,
  )
}

/** The cancel requests pending on running Runs that `owner` holds, oldest first. */
export async function listCancelRequests(
  driver: SqlDriver,
  owner: string,
  options: CallOptions = {},
): Promise<RunCancelRequest[]> {
  return driver.transaction(
    'read',
    async (transaction) => {
      const rows = await transaction.all<{
        id: string
        requested_at: string
        requested_by: string
      }>(
        `SELECT id, cancel_requested_at AS requested_at, cancel_requested_by AS requested_by FROM runs
          WHERE lease_owner = ? AND status = 'running' AND cancel_requested_at IS NOT NULL
          ORDER BY cancel_requested_at, id`,
        [owner],
      )
      return rows.map((row) => ({ runId: row.id, at: row.requested_at, by: row.requested_by }))
    },
    options,
  )
}
