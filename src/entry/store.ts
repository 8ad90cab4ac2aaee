/**
 * @module eitri/store
 * The durable store (SQLite or PostgreSQL): tasks, knowledge, lines, approvals, receipts, Runs.
 */
export { openStore, type OpenStoreOptions } from '../store/open-store.ts'
export type { Store, StoreBackend, StoreCallOptions, StoreJournalOptions } from '../store/store.ts'
export type { StoreDependencies } from '../store/store-dependencies.ts'
export type { LineRecord, MergeConflict, MergeOptions, MergeReport } from '../store/line-record.ts'
export {
  RUN_STATUSES,
  type RunAdmission,
  type RunCancelRequest,
  type RunEvent,
  type RunEventInput,
  type RunFilter,
  type RunFinish,
  type RunFinishStatus,
  type RunLeaseTerms,
  type RunProvenance,
  type RunRecord,
  type RunSettlement,
  type RunStatus,
  type SettlementStatus,
} from '../store/run-record.ts'
export type {
  ChatMessage,
  ChatMessageRecord,
  ModelStepMetrics,
  ModelUsage,
  RunMetrics,
  RunStepRecords,
} from '../store/run-trace.ts'
export type {
  ApprovalEntry,
  ApprovalRecord as StoredApproval,
  AuditFilter,
  ReceiptEntry,
  ReceiptRecord,
} from '../store/audit-records.ts'
