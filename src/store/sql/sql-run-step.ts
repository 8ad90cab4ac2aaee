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
import { checkEvents, insertRunEvents, lockRun } from './sql-runs.ts'
import {
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
      await lockRun(transaction, runId)
      const now = dependencies.now().toISOString()
      const stored = await insertRunEvents(transaction, runId, events, now)
      const messages =
        step.chat === undefined
          ? []
          : await insertChatMessages(transaction, step.chat.chatId, runId, step.chat.messages, now)
      if (step.metrics !== undefined) {
        await writeRunMetrics(transaction, runId, step.metrics, now)
      }
      return { events: stored, messages }
    },
    options,
  )
}
