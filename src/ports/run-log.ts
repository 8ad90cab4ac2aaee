/**
 * @module ports/run-log
 * What tools may read of the Runs in the store: the rows and their journals, never a write.
 * The workshop implements it from the store; the rows carry the store's field names.
 */

/**
 * The fields of a Run row a tool reads. The store's rows have more (provenance, leases); they
 * are passed on whole.
 */
export interface RunView {
  readonly id: string
  readonly kind: string
  readonly agentId?: string | undefined
  readonly parentId: string | null
  /** `running`, `waiting`, `completed`, `failed` or `cancelled`. */
  readonly status: string
  readonly reason: string | null
  readonly error: unknown
  readonly value: unknown
  readonly output: string | null
  readonly settlementStatus: string
  readonly settlementReason: string | null
  readonly startedAt: string
  readonly endedAt: string | null
}

/** One entry of a Run's journal. */
export interface RunEventView {
  readonly sequence: number
  readonly type: string
  readonly data: unknown
  readonly time: string
}

/** Options every Run read accepts. */
export interface RunLogCallOptions {
  readonly signal?: AbortSignal
}

/**
 * The Runs of the store, read-only.
 *
 * @example
 * const running = await ctx.runs.list({ status: 'running' })
 */
export interface RunLog {
  /** Runs, newest first; a Run whose owner stopped renewing its lease reads as interrupted. */
  list(
    filter?: { readonly status?: string | undefined; readonly parentId?: string | undefined },
    options?: RunLogCallOptions,
  ): Promise<readonly RunView[]>
  get(id: string, options?: RunLogCallOptions): Promise<RunView | undefined>
  /** The Run's journal in order. */
  events(id: string, options?: RunLogCallOptions): Promise<readonly RunEventView[]>
}
