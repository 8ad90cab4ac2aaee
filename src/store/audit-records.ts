/**
 * @module store/audit-records
 * Append-only records: approval decisions and receipts of effects.
 */

/** One decision about an action that needed a person (the access layer records these). */
export interface ApprovalEntry {
  /** ISO-8601. */
  readonly time: string
  readonly tool: string
  /** A digest of the input, so the log shows what was decided without its content. */
  readonly inputDigest: string
  readonly decision: 'approved' | 'approved-for-session' | 'denied'
  /** Who decided: a person, a rule, a test approver. */
  readonly by: string
  readonly summary?: string | undefined
  readonly reason?: string | undefined
  readonly access?: string | undefined
  readonly dangerous?: boolean | undefined
  readonly runId?: string | undefined
  readonly line?: string | undefined
  /** Anything else worth keeping, as JSON-compatible data. */
  readonly details?: unknown
}

/** A stored decision, with its place in the log. */
export interface ApprovalRecord extends ApprovalEntry {
  readonly sequence: number
}

/** One effect worth a receipt: a write batch, an unconfined run, a merge. */
export interface ReceiptEntry {
  readonly time: string
  /** What kind of effect, noun-verb (`files-write`, `line-merge`). */
  readonly kind: string
  readonly tool?: string | undefined
  readonly runId?: string | undefined
  readonly line?: string | undefined
  /** A digest of the effect's content. */
  readonly digest?: string | undefined
  readonly details?: unknown
}

/** A stored receipt, with its place in the log. */
export interface ReceiptRecord extends ReceiptEntry {
  readonly sequence: number
}

/** Filters of the audit lists; results are in the order written. */
export interface AuditFilter {
  readonly tool?: string | undefined
  readonly runId?: string | undefined
  /** Only records written after this sequence number. */
  readonly after?: number | undefined
  /** @default 1000 */
  readonly limit?: number | undefined
}
