/**
 * @module tool/code-evaluator
 * How a tool runs model-written code: in a session of the code sandbox that belongs to the
 * caller. The eval layer implements this interface; a context without one cannot run code.
 */
/** Codes of an eval that did not answer a value. */
export type EvalFailureCode =
  'eval_error' | 'timeout' | 'cancelled' | 'memory_limit' | 'sandbox_reset'

/** An eval that answered a value. */
export interface EvalValue {
  readonly type: 'value'
  /** The last expression's value: a string as is, anything else rendered like a REPL. */
  readonly value: string
  /** `typeof` the value (`null` for null). */
  readonly valueType: string
  /** What the guest printed with `console`, bounded. */
  readonly output: string
}

/** An eval that failed. */
export interface EvalFailure {
  readonly type: 'error'
  readonly code: EvalFailureCode
  /** The guest's message (`TypeError: …`), or what stopped the eval. */
  readonly message: string
  /** Guest frames only, when the guest threw. */
  readonly stack?: string | undefined
  readonly output: string
  /** Whether the session's definitions survived. */
  readonly stateKept: boolean
}

/** How one eval ended. */
export type EvalOutcome = EvalValue | EvalFailure

/** One eval asked for. */
export interface EvalRequest {
  readonly code: string
  /** Which of the caller's own sessions. @default 'default' */
  readonly session?: string | undefined
  /** @default 60 000 */
  readonly timeoutMs?: number | undefined
}

/** One eval's answer. */
export interface EvalAnswer {
  readonly outcome: EvalOutcome
  /** The session's name. */
  readonly session: string
  /** Set when the session's earlier definitions are gone, saying why (idle, evicted, …). */
  readonly sessionReset?: string | undefined
  /** `tools.call` calls this eval made. */
  readonly toolCalls: number
  readonly durationMs: number
}

/**
 * The code sessions of one caller (an MCP connection, a library caller). `Context` is the
 * calling tool's context (`ToolContext`), handed to the capabilities the code calls.
 */
export interface CodeEvaluator<Context> {
  /** Runs one eval in one of the caller's sessions; never throws for what the code does. */
  evaluate(request: EvalRequest, ctx: Context): Promise<EvalAnswer>
}
