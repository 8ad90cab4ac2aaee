/**
 * @module store/store
 * The durable store: runs and their journals, approvals and receipts, and the tasks and
 * knowledge of each workspace line. One interface, two backends (SQLite embedded, PostgreSQL
 * for many machines), one contract suite (`store-contract.ts`) run against both.
 */
import type { KnowledgeBase } from '../ports/knowledge-base.ts'
import type { TaskBoard } from '../ports/task-board.ts'
import type {
  ApprovalEntry,
  ApprovalRecord,
  AuditFilter,
  ReceiptEntry,
  ReceiptRecord,
} from './audit-records.ts'
import type { LineRecord, MergeOptions, MergeReport } from './line-record.ts'
import type {
  RunAdmission,
  RunCancelRequest,
  RunEvent,
  RunFilter,
  RunFinish,
  RunLeaseTerms,
  RunRecord,
  RunSettlement,
} from './run-record.ts'
import type { ChatMessage, ChatMessageRecord, RunMetrics, RunStepRecords } from './run-trace.ts'

/** Options every store operation accepts. */
export interface StoreCallOptions {
  readonly signal?: AbortSignal
}

/** A journal write's options: `deferSync` as `TransactionOptions` says (the kill-safe commit). */
export interface StoreJournalOptions extends StoreCallOptions {
  readonly deferSync?: boolean
}

/** Which backend a store runs on. */
export type StoreBackend = 'sqlite' | 'postgres'

/**
 * Durable state. Every write is committed (and, for SQLite, synced) before its promise
 * resolves, so an acknowledged write survives `kill -9` of the process.
 *
 * Tasks and knowledge belong to a workspace line: a fork sees its parent's rows as of the
 * fork plus its own, a merge makes its rows the parent's, a discard drops them.
 *
 * @example
 * await using store = await openStore('sqlite:/tmp/eitri.sqlite')
 * await store.tasks('main').create({ title: 'Ship it' })
 */
export interface Store extends AsyncDisposable {
  readonly backend: StoreBackend
  /** Where it is, safe to print (a PostgreSQL password is masked). */
  readonly location: string

  /** The tasks of an open line. Operations throw `conflict` once the line is closed. */
  tasks(line: string): TaskBoard
  /** The knowledge of an open line. */
  knowledge(line: string): KnowledgeBase

  /**
   * Forks `child` from the open line `parent` in O(1): nothing is copied.
   * @throws EitriError `conflict` when `child` exists or `parent` is closed; `not_found`.
   */
  forkLine(parent: string, child: string, options?: StoreCallOptions): Promise<LineRecord>
  /**
   * Makes the child's rows its parent's and closes the child.
   * @throws EitriError `conflict` when the child has open forks, or has conflicts and
   *   `conflicts: 'refuse'`; `not_found`.
   */
  mergeLine(child: string, options?: MergeOptions): Promise<MergeReport>
  /** Drops the rows of `child` and of every open fork below it, and closes them. */
  discardLine(child: string, options?: StoreCallOptions): Promise<LineRecord[]>
  getLine(name: string, options?: StoreCallOptions): Promise<LineRecord | undefined>
  listLines(options?: StoreCallOptions): Promise<LineRecord[]>

  /**
   * Writes a new Run row as `running`, durably, before the Run starts; `admission.events`
   * (its trigger) open its journal in the same transaction.
   * @throws EitriError `conflict` when a Run with that id exists.
   */
  admitRun(admission: RunAdmission, options?: StoreCallOptions): Promise<RunRecord>
  /**
   * Writes the Run's new status; resolves only once it is durable, so nobody is told a Run
   * finished before its row says so. `finish.events` (`finished`) are journaled in the same
   * transaction, so they are never read without the row they report.
   * @throws EitriError `not_found`; `conflict` when it already ended.
   */
  finishRun(id: string, finish: RunFinish, options?: StoreCallOptions): Promise<RunRecord>
  /** Records what happened to a Run's effects. @throws `not_found`; `conflict` once settled. */
  settleRun(id: string, settlement: RunSettlement, options?: StoreCallOptions): Promise<RunRecord>
  getRun(id: string, options?: StoreCallOptions): Promise<RunRecord | undefined>
  /** Runs, newest first. */
  listRuns(filter?: RunFilter, options?: StoreCallOptions): Promise<RunRecord[]>
  /**
   * Appends to a Run's journal in one transaction; returns the stored events. With `deferSync`
   * it resolves at the commit (which survives the process being killed) and is synced with the
   * next synced write.
   */
  appendRunEvents(
    runId: string,
    events: readonly { readonly type: string; readonly data?: unknown }[],
    options?: StoreJournalOptions,
  ): Promise<RunEvent[]>
  /** A Run's journal in order, optionally after a sequence number. */
  listRunEvents(
    runId: string,
    filter?: { readonly after?: number | undefined },
    options?: StoreCallOptions,
  ): Promise<RunEvent[]>

  /**
   * Takes the lease of a running Run for `lease.owner` (a process id), until `lease.ttlMs`
   * from now unless renewed. Prefer `admitRun({ lease })`, which holds it from the start.
   * @throws EitriError `not_found`; `conflict` when it is not running or another owner holds it.
   */
  holdRun(id: string, lease: RunLeaseTerms, options?: StoreCallOptions): Promise<RunRecord>
  /**
   * The heartbeat: extends every Run `lease.owner` holds (running, or ended and not settled
   * yet: a lease lasts from admission to settlement) to `ttlMs` from now, and answers their
   * ids. A Run swept as interrupted is not revived.
   */
  renewRunLeases(lease: RunLeaseTerms, options?: StoreCallOptions): Promise<string[]>
  /**
   * Ends `owner`'s leases now (all, or those of `ids`): a Run it still held is then swept as
   * interrupted. Another owner's Runs are never touched. Answers the ids released.
   */
  releaseRunLeases(
    owner: string,
    ids?: readonly string[],
    options?: StoreCallOptions,
  ): Promise<string[]>
  /**
   * Marks `failed`, reason `interrupted`, every running Run whose lease lapsed (and every one
   * nobody held that has not changed for `unleasedAfterMs`, default 15 s), journaling a
   * `finished` event, atomically: a Run whose owner renewed in time is never marked. An ended
   * Run whose lease lapsed before it was settled is kept for review (settlement reason
   * `settlement-interrupted: …`), for a person to merge or discard. Answers the Runs it ended.
   */
  sweepInterruptedRuns(
    options?: StoreCallOptions & { readonly unleasedAfterMs?: number | undefined },
  ): Promise<RunRecord[]>
  /**
   * Asks whoever holds a Run to cancel it: durable, journaled as `cancel-requested`, and
   * idempotent. The owner finds it with `listCancelRequests`.
   * @throws EitriError `not_found`; `conflict` when the Run already ended.
   */
  requestRunCancel(id: string, by: string, options?: StoreCallOptions): Promise<RunRecord>
  /** The cancel requests pending on the running Runs `owner` holds, oldest first. */
  listCancelRequests(owner: string, options?: StoreCallOptions): Promise<RunCancelRequest[]>

  /**
   * Writes (replaces) a Run's metrics: its model usage and cost, per step and in total.
   * @throws EitriError `not_found` when there is no such Run.
   */
  recordRunMetrics(runId: string, metrics: RunMetrics, options?: StoreCallOptions): Promise<void>
  /** A Run's metrics; undefined when it recorded none. */
  getRunMetrics(runId: string, options?: StoreCallOptions): Promise<RunMetrics | undefined>
  /**
   * Appends messages to the chat `chatId` of the Run `runId`, in one transaction. A chat is
   * kept whatever happens to the Run's world.
   * @throws EitriError `not_found` when there is no such Run; `conflict` when the chat is
   *   another Run's.
   */
  appendChatMessages(
    chatId: string,
    runId: string,
    messages: readonly ChatMessage[],
    options?: StoreCallOptions,
  ): Promise<ChatMessageRecord[]>
  /**
   * Writes one step of a model Run in one transaction: `step.events` appended to its journal,
   * then `step.chat.messages` to its chat, then `step.metrics` in place of its metrics. All
   * land or none do; the promise resolves once they are durable.
   * @throws EitriError `invalid_input`; `not_found` when there is no such Run; `conflict`
   *   when the chat is another Run's.
   */
  appendRunStep(
    runId: string,
    step: RunStepRecords,
    options?: StoreCallOptions,
  ): Promise<{ readonly events: RunEvent[]; readonly messages: ChatMessageRecord[] }>
  /** A chat's messages, in order (none for an unknown chat). */
  listChatMessages(chatId: string, options?: StoreCallOptions): Promise<ChatMessageRecord[]>

  /** Appends a decision to the approval log. */
  recordApproval(entry: ApprovalEntry, options?: StoreCallOptions): Promise<ApprovalRecord>
  /** Decisions in the order recorded. */
  listApprovals(filter?: AuditFilter, options?: StoreCallOptions): Promise<ApprovalRecord[]>
  /** Appends a receipt of an effect. */
  recordReceipt(entry: ReceiptEntry, options?: StoreCallOptions): Promise<ReceiptRecord>
  listReceipts(filter?: AuditFilter, options?: StoreCallOptions): Promise<ReceiptRecord[]>

  /** The schema version in force (the number of migrations applied). */
  schemaVersion(options?: StoreCallOptions): Promise<number>
  /** Closes the database or the pool. Idempotent; later calls throw `not_available`. */
  close(): Promise<void>
}
