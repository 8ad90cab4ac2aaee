/**
 * @module store/run-record
 * The durable record of one Run (its status, provenance, settlement and times) and what writes it.
 */

/** Every status of a Run. `running` after a crash means unfinished, not live. */
export const RUN_STATUSES = Object.freeze([
  'running',
  'waiting',
  'completed',
  'failed',
  'cancelled',
] as const)

/** One of {@link RUN_STATUSES}. */
export type RunStatus = (typeof RUN_STATUSES)[number]

/** The statuses `finishRun` writes. `waiting` is not terminal and has no `endedAt`. */
export type RunFinishStatus = Exclude<RunStatus, 'running'>

/** What happens to a Run's forked effects; a separate axis from status. */
export type SettlementStatus = 'open' | 'merged' | 'review' | 'discarded'

/** The terminal statuses, which can never change again. */
export const TERMINAL_RUN_STATUSES: readonly RunStatus[] = ['completed', 'failed', 'cancelled']

/** Where a Run came from: fixed at admission, never overwritten by later writes. */
export interface RunProvenance {
  readonly roster?: string | undefined
  readonly agentId?: string | undefined
  readonly agentVersion?: number | undefined
  readonly programKind?: string | undefined
  readonly interpreterVersion?: number | undefined
  readonly agentDefHash?: string | undefined
  readonly chatId?: string | undefined
  /** The workspace line the Run works in (its fork). */
  readonly world?: string | undefined
  readonly isolation?: string | undefined
  readonly settlementPolicy?: string | undefined
}

/** What `admitRun` takes. */
export interface RunAdmission extends RunProvenance {
  readonly id: string
  /** `agent-task` for a hire, `agent-turn` for a chat turn. @default 'agent-task' */
  readonly kind?: string | undefined
  /** The structural parent Run. */
  readonly parentId?: string | undefined
  /** Runs whose results this one consumed. */
  readonly causedBy?: readonly string[] | undefined
  readonly actor?: string | undefined
  /** The trigger (the task given), as JSON-compatible data. */
  readonly trigger?: unknown
  /** @default the store's clock */
  readonly createdAt?: string | undefined
  /** Held from the start by this owner, in the same transaction as the row. */
  readonly lease?: RunLeaseTerms | undefined
  /**
   * The first entries of the Run's journal (its trigger), written in the same transaction as
   * the row: one commit where a row and then an append would take two.
   */
  readonly events?: readonly RunEventInput[] | undefined
}

/** A journal entry as written: its type (noun-verb) and JSON-compatible data. */
export interface RunEventInput {
  readonly type: string
  readonly data?: unknown
}

/** Who holds a running Run, and for how long from now (the store's clock). */
export interface RunLeaseTerms {
  /** The id of the holding process: the same for every Run it holds. */
  readonly owner: string
  /** How long the lease lasts unless renewed, in ms. */
  readonly ttlMs: number
}

/** A pending request to cancel a Run, for the process that holds it. */
export interface RunCancelRequest {
  readonly runId: string
  readonly at: string
  /** Who asked, as they named themselves. */
  readonly by: string
}

/** The reason a sweep writes on a Run whose owner stopped renewing its lease. */
export const INTERRUPTED_REASON = 'interrupted'

/**
 * The reason a sweep writes instead when the Run's journal ends on an intent with no result
 * (an effect, such as a model or tool call, started and its outcome was never recorded): it is
 * unknown whether the effect happened, so the Run is never silently re-run.
 */
export const UNKNOWN_OUTCOME_REASON = 'unknown-outcome'

/**
 * How a sweep's settlement reason begins for a Run that ended but whose process died before
 * settling it: it is kept for review, for a person to merge or discard.
 */
export const SETTLEMENT_INTERRUPTED_REASON = 'settlement-interrupted'

/** The reasons of Runs a sweep ended (their process died): they will not settle by themselves. */
export const SWEPT_REASONS: readonly string[] = Object.freeze([
  INTERRUPTED_REASON,
  UNKNOWN_OUTCOME_REASON,
])

/** One durable Run row. */
export interface RunRecord extends RunProvenance {
  readonly id: string
  readonly kind: string
  readonly parentId: string | null
  readonly causedBy: readonly string[]
  readonly actor: string | null
  readonly trigger: unknown
  readonly status: RunStatus
  readonly reason: string | null
  readonly error: unknown
  /** The result value of a completed Run. */
  readonly value: unknown
  readonly output: string | null
  readonly settlementStatus: SettlementStatus
  readonly settlementReason: string | null
  readonly createdAt: string
  readonly startedAt: string
  readonly updatedAt: string
  /** Set for completed, failed and cancelled only. */
  readonly endedAt: string | null
  /** The process holding a running Run; absent once it finished or when none holds it. */
  readonly leaseOwner?: string | undefined
  /** When that lease lapses unless renewed. */
  readonly leaseExpiresAt?: string | undefined
  /** Set once someone asked the owner to cancel the Run; kept after it ends. */
  readonly cancelRequestedAt?: string | undefined
  readonly cancelRequestedBy?: string | undefined
}

/** What `finishRun` takes. */
export interface RunFinish {
  readonly status: RunFinishStatus
  readonly reason?: string | undefined
  readonly error?: unknown
  readonly value?: unknown
  readonly output?: string | undefined
  /**
   * Journal entries (`finished`) appended in the same transaction as the terminal row, after
   * it: nobody ever reads them without the row they report, and a refused finish writes none.
   */
  readonly events?: readonly RunEventInput[] | undefined
}

/** What `settleRun` takes. */
export interface RunSettlement {
  readonly status: Exclude<SettlementStatus, 'open'>
  readonly reason: string
}

/** One entry of a Run's journal (an intent before a call, its result after, activity). */
export interface RunEvent {
  readonly runId: string
  /** Position in the Run's journal, from 1. */
  readonly sequence: number
  /** Noun-verb, such as `tool-call-start`. */
  readonly type: string
  readonly data: unknown
  readonly time: string
}

/** Filters of `listRuns`. */
export interface RunFilter {
  readonly status?: RunStatus | undefined
  readonly parentId?: string | undefined
  /** @default 100 */
  readonly limit?: number | undefined
}
