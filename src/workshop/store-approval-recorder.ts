/**
 * @module workshop/store-approval-recorder
 * The access layer's approval log, kept in the store: decisions survive crashes and, on
 * PostgreSQL, are shared by every machine.
 */
import type { ApprovalRecord, ApprovalRecorder } from '../access/approval-log.ts'
import type { Store } from '../store/store.ts'

/** An ApprovalRecorder writing to `store`. */
export function storeApprovalRecorder(store: Store): ApprovalRecorder {
  return {
    async record(entry) {
      await store.recordApproval(entry)
    },
    async list() {
      return (await store.listApprovals()).map((record): ApprovalRecord => ({
        time: record.time,
        tool: record.tool,
        inputDigest: record.inputDigest,
        summary: record.summary ?? '',
        decision: record.decision,
        by: record.by,
        ...(record.reason === undefined ? {} : { reason: record.reason }),
        access: record.access ?? '',
        dangerous: record.dangerous ?? false,
      }))
    },
  }
}
