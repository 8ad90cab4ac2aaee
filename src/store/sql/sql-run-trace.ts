/**
 * @module store/sql/sql-run-trace
 * Run metrics and chat messages. Neither belongs to a line, so discarding a Run's world keeps
 * them; each write is one transaction, committed before its promise resolves.
 */
import { EitriError } from '../../errors/eitri-error.ts'
import type { ChatMessage, ChatMessageRecord, RunMetrics } from '../run-trace.ts'
import type { StoreDependencies } from '../store-dependencies.ts'
import { fromJsonColumn, toJsonColumn } from './json-column.ts'
import type { SqlDriver } from './sql-driver.ts'

type CallOptions = { readonly signal?: AbortSignal | undefined }

/** Writes (replaces) the metrics of a Run. */
export async function recordRunMetrics(
  driver: SqlDriver,
  dependencies: StoreDependencies,
  runId: string,
  metrics: RunMetrics,
  options: CallOptions = {},
): Promise<void> {
  if (typeof metrics !== 'object' || metrics === null) {
    throw new EitriError('invalid_input', 'Run metrics must be an object.')
  }
  return driver.transaction(
    'write',
    async (transaction) => {
      const run = await transaction.get('SELECT id FROM runs WHERE id = ?', [runId])
      if (run === undefined) throw new EitriError('not_found', `No Run ${runId} in the store.`)
      const now = dependencies.now().toISOString()
      await transaction.run(
        `INSERT INTO run_metrics (run_id, data, updated_at) VALUES (?, ?, ?)
          ON CONFLICT (run_id) DO UPDATE SET data = excluded.data, updated_at = excluded.updated_at`,
        [runId, toJsonColumn(metrics), now],
      )
    },
    options,
  )
}

/** The metrics of a Run; undefined when it recorded none. */
export function getRunMetrics(
  driver: SqlDriver,
  runId: string,
  options: CallOptions = {},
): Promise<RunMetrics | undefined> {
  return driver.transaction(
    'read',
    async (transaction) => {
      const row = await transaction.get('SELECT data FROM run_metrics WHERE run_id = ?', [runId])
      return row === undefined ? undefined : (fromJsonColumn(row['data']) as RunMetrics)
    },
    options,
  )
}

/** Appends messages to a chat of a Run, in one transaction. */
export async function appendChatMessages(
  driver: SqlDriver,
  dependencies: StoreDependencies,
  chatId: string,
  runId: string,
  messages: readonly ChatMessage[],
  options: CallOptions = {},
): Promise<ChatMessageRecord[]> {
  if (typeof chatId !== 'string' || chatId === '') {
    throw new EitriError('invalid_input', 'A chat message needs a chat id.')
  }
  for (const message of messages) {
    if (typeof message.role !== 'string' || message.role === '') {
      throw new EitriError('invalid_input', 'Every chat message needs a role, such as user.')
    }
  }
  return driver.transaction(
    'write',
    async (transaction) => {
      const run = await transaction.get('SELECT id FROM runs WHERE id = ?', [runId])
      if (run === undefined) throw new EitriError('not_found', `No Run ${runId} in the store.`)
      const owner = await transaction.get<{ run_id: string }>(
        'SELECT run_id FROM chat_messages WHERE chat_id = ? LIMIT 1',
        [chatId],
      )
      if (owner !== undefined && owner.run_id !== runId) {
        throw new EitriError('conflict', `Chat ${chatId} belongs to another Run.`)
      }
      const last = await transaction.get<{ last: number | null }>(
        'SELECT MAX(sequence) AS last FROM chat_messages WHERE chat_id = ?',
        [chatId],
      )
      const time = dependencies.now().toISOString()
      let sequence = Number(last?.last ?? 0)
      const stored: ChatMessageRecord[] = []
      for (const message of messages) {
        sequence += 1
        await transaction.run(
          `INSERT INTO chat_messages (chat_id, sequence, run_id, role, content, time)
            VALUES (?, ?, ?, ?, ?, ?)`,
          [chatId, sequence, runId, message.role, toJsonColumn(message.content), time],
        )
        stored.push({ chatId, runId, sequence, role: message.role, content: message.content, time })
      }
      return stored
    },
    options,
  )
}

/** The messages of a chat, in order. */
export function listChatMessages(
  driver: SqlDriver,
  chatId: string,
  options: CallOptions = {},
): Promise<ChatMessageRecord[]> {
  return driver.transaction(
    'read',
    async (transaction) => {
      const rows = await transaction.all(
        'SELECT * FROM chat_messages WHERE chat_id = ? ORDER BY sequence',
        [chatId],
      )
      return rows.map((row) => ({
        chatId: row['chat_id'] as string,
        runId: row['run_id'] as string,
        sequence: Number(row['sequence']),
        role: row['role'] as string,
        content: fromJsonColumn(row['content']),
        time: row['time'] as string,
      }))
    },
    options,
  )
}
