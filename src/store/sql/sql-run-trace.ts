/**
 * @module store/sql/sql-run-trace
 * Run metrics and chat messages. Neither belongs to a line, so discarding a Run's world keeps
 * them; each write is one transaction, committed before its promise resolves.
 */
import { EitriError } from '../../errors/eitri-error.ts'
import type { ChatMessage, ChatMessageRecord, RunMetrics } from '../run-trace.ts'
import type { StoreDependencies } from '../store-dependencies.ts'
import { fromJsonColumn, toJsonColumn } from './json-column.ts'
import type { SqlDriver, SqlTransaction } from './sql-driver.ts'
import { insertRows } from './sql-runs.ts'

type CallOptions = { readonly signal?: AbortSignal | undefined }

/** Writes (replaces) the metrics of a Run. */
export async function recordRunMetrics(
  driver: SqlDriver,
  dependencies: StoreDependencies,
  runId: string,
  metrics: RunMetrics,
  options: CallOptions = {},
): Promise<void> {
  checkMetrics(metrics)
  return driver.transaction(
    'write',
    async (transaction) => {
      await requireRunId(transaction, runId)
      await writeRunMetrics(transaction, runId, metrics, dependencies.now().toISOString())
    },
    options,
  )
}

/** Refuses metrics that are not an object, before any transaction. */
export function checkMetrics(metrics: RunMetrics): void {
  if (typeof metrics !== 'object' || metrics === null) {
    throw new EitriError('invalid_input', 'Run metrics must be an object.')
  }
}

/** @throws EitriError `not_found` when there is no Run `runId`. */
export async function requireRunId(transaction: SqlTransaction, runId: string): Promise<void> {
  const run = await transaction.get('SELECT id FROM runs WHERE id = ?', [runId])
  if (run === undefined) throw new EitriError('not_found', `No Run ${runId} in the store.`)
}

/** Writes (replaces) the metrics of an existing Run inside a transaction. */
export async function writeRunMetrics(
  transaction: SqlTransaction,
  runId: string,
  metrics: RunMetrics,
  now: string,
): Promise<void> {
  await transaction.run(
    `INSERT INTO run_metrics (run_id, data, updated_at) VALUES (?, ?, ?)
      ON CONFLICT (run_id) DO UPDATE SET data = excluded.data, updated_at = excluded.updated_at`,
    [runId, toJsonColumn(metrics), now],
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
  checkChatMessages(chatId, messages)
  return driver.transaction(
    'write',
    async (transaction) => {
      await requireRunId(transaction, runId)
      return insertChatMessages(
        transaction,
        chatId,
        runId,
        messages,
        dependencies.now().toISOString(),
      )
    },
    options,
  )
}

/** Refuses a chat without an id or a message without a role, before any transaction. */
export function checkChatMessages(chatId: string, messages: readonly ChatMessage[]): void {
  if (typeof chatId !== 'string' || chatId === '') {
    throw new EitriError('invalid_input', 'A chat message needs a chat id.')
  }
  for (const message of messages) {
    if (typeof message.role !== 'string' || message.role === '') {
      throw new EitriError('invalid_input', 'Every chat message needs a role, such as user.')
    }
  }
}

/**
 * Appends messages to the chat of an existing Run inside a transaction.
 * @throws EitriError `conflict` when the chat is another Run's.
 */
export async function insertChatMessages(
  transaction: SqlTransaction,
  chatId: string,
  runId: string,
  messages: readonly ChatMessage[],
  time: string,
  /** The chat's last message (null: none yet), when the caller has read it in this transaction. */
  known?: ChatTail | null,
): Promise<ChatMessageRecord[]> {
  // The chat's last message gives both its owner (every message of a chat is its Run's) and
  // where the sequence goes on: one lookup on the key, not two.
  const last =
    known !== undefined
      ? known
      : await transaction.get<{ run_id: string; sequence: number }>(
          'SELECT run_id, sequence FROM chat_messages WHERE chat_id = ? ORDER BY sequence DESC LIMIT 1',
          [chatId],
        )
  if (last != null && last.run_id !== runId) {
    throw new EitriError('conflict', `Chat ${chatId} belongs to another Run.`)
  }
  if (messages.length === 0) return []
  let sequence = Number(last?.sequence ?? 0)
  const stored = messages.map((message): ChatMessageRecord => ({
    chatId,
    runId,
    sequence: (sequence += 1),
    role: message.role,
    content: message.content,
    time,
  }))
  await insertRows(
    transaction,
    'INSERT INTO chat_messages (chat_id, sequence, run_id, role, content, time) VALUES',
    stored.map((message) => [
      chatId,
      message.sequence,
      runId,
      message.role,
      toJsonColumn(message.content),
      time,
    ]),
  )
  return stored
}

/** A chat's last message: its Run and sequence. */
export interface ChatTail {
  readonly run_id: string
  readonly sequence: number
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
