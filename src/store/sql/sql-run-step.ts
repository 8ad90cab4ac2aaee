/**
 * @module store/sql/sql-run-step
 * One step of a model Run written in one transaction: its journal events, its chat messages
 * and its metrics. A model loop writes a step this way so that it pays one commit where it
 * would pay one per record, and a step is never read half written.
 */
import type { RunEvent } from '../run-record.ts'
import type { ChatMessageRecord, RunStepRecords } from '../run-trace.ts'
import type { StoreDependencies } from '../store-dependencies.ts'
import type { SqlDriver } from './sql-driver.ts'
import { EitriError } from '../../errors/eitri-error.ts'
import type { SqlTransaction } from './sql-driver.ts'
import { checkEvents, insertRunEvents } from './sql-runs.ts'
import {
  type ChatTail,
  checkChatMessages,
  checkMetrics,
  insertChatMessages,
  writeRunMetrics,
} from './sql-run-trace.ts'

type CallOptions = { readonly signal?: AbortSignal | undefined }

/** What a step's write stored. */
export interface RunStepWritten {
  readonly events: RunEvent[]
  readonly messages: ChatMessageRecord[]
}

/**
 * Writes a step's events, then its chat messages, then its metrics, all or none.
 * @throws EitriError `invalid_input` (before any transaction), `not_found`, `conflict` when
 *   the chat is another Run's.
 */
export async function appendRunStep(
  driver: SqlDriver,
  dependencies: StoreDependencies,
  runId: string,
  step: RunStepRecords,
  options: CallOptions = {},
): Promise<RunStepWritten> {
  const events = step.events ?? []
  checkEvents(events)
  if (step.chat !== undefined) checkChatMessages(step.chat.chatId, step.chat.messages)
  if (step.metrics !== undefined) checkMetrics(step.metrics)
  return driver.transaction(
    'write',
    async (transaction) => {
      const head = await lockStepRun(transaction, runId, step.chat?.chatId)
      const now = dependencies.now().toISOString()
      const stored = await insertRunEvents(transaction, runId, events, now, head.lastEvent)
      const messages =
        step.chat === undefined
          ? []
          : await insertChatMessages(
              transaction,
              step.chat.chatId,
              runId,
              step.chat.messages,
              now,
              head.chatTail,
            )
      if (step.metrics !== undefined) {
        await writeRunMetrics(transaction, runId, step.metrics, now)
      }
      return { events: stored, messages }
    },
    options,
  )
}

/**
 * Locks the step's Run (`FOR UPDATE` on PostgreSQL; SQLite's write lock is the transaction's)
 * and reads, in the same statement, its journal's last sequence and the chat's last message:
 * one statement where the step's write would make three.
 * @throws EitriError `not_found` when there is no such Run.
 */
async function lockStepRun(
  transaction: SqlTransaction,
  runId: string,
  chatId: string | undefined,
): Promise<{ readonly lastEvent: number; readonly chatTail: ChatTail | null }> {
  const lock = transaction.dialect === 'postgres' ? ' FOR UPDATE' : ''
  const tail = (column: string) =>
    `(SELECT ${column} FROM chat_messages WHERE chat_id = ? ORDER BY sequence DESC LIMIT 1)`
  const row = await transaction.get<{
    last_event: number | null
    chat_run: string | null
    chat_sequence: number | null
  }>(
    `SELECT (SELECT MAX(sequence) FROM run_events WHERE run_id = runs.id) AS last_event,
      ${tail('run_id')} AS chat_run, ${tail('sequence')} AS chat_sequence
      FROM runs WHERE id = ?${lock}`,
    [chatId ?? '', chatId ?? '', runId],
  )
  if (row === undefined) throw new EitriError('not_found', `No Run with id ${runId}.`)
  return {
    lastEvent: Number(row.last_event ?? 0),
    chatTail:
      row.chat_run === null ? null : { run_id: row.chat_run, sequence: Number(row.chat_sequence) },
  }
}
