/**
 * @module store/run-trace
 * What a model Run leaves besides its row and journal: its usage and cost (metrics) and every
 * message of its conversation (its chat). Both are keyed by the Run, not by a workspace line,
 * so they outlive the Run's world: a discarded world keeps its trace.
 */

/** Tokens and dollars of one model call, or a sum of them. */
export interface ModelUsage {
  readonly inputTokens: number
  readonly outputTokens: number
  /** Input tokens read from the provider's cache (part of `inputTokens`). */
  readonly cachedInputTokens: number
  readonly dollars: number
}

/** One model step of a Run. */
export interface ModelStepMetrics extends ModelUsage {
  /** 0 for the first step. */
  readonly step: number
  readonly finishReason: string
  /** The tools the model called in this step, in order. */
  readonly toolCalls: readonly string[]
}

/** A model Run's usage: per step and in total. */
export interface RunMetrics extends ModelUsage {
  readonly provider: string
  readonly model: string
  /** How many model steps ran. */
  readonly modelSteps: number
  /**
   * A content hash over what the model was given before the task: the system prompt, each
   * offered tool's name, description and schema, and the model. Two Runs with the same
   * `inputsId` asked the same model the same way.
   */
  readonly inputsId: string
  readonly steps: readonly ModelStepMetrics[]
}

/** One message of a chat, as stored. */
export interface ChatMessageRecord {
  readonly chatId: string
  /** The Run the chat belongs to. */
  readonly runId: string
  /** 1 for the first message of the chat. */
  readonly sequence: number
  /** `system`, `user`, `assistant`, `tool`, or `summary` (a compaction's summary of earlier messages). */
  readonly role: string
  /** The message's content as the model API shapes it (plain JSON). */
  readonly content: unknown
  readonly time: string
}

/** A message to append. */
export interface ChatMessage {
  readonly role: string
  readonly content: unknown
}

/**
 * What one step of a model Run leaves, written together: its journal events, its chat
 * messages and its metrics (each part optional). A step is written in one transaction, so it
 * lands whole or not at all.
 */
export interface RunStepRecords {
  readonly events?: readonly { readonly type: string; readonly data?: unknown }[] | undefined
  /** Messages appended to the chat `chatId` of the Run. */
  readonly chat?: { readonly chatId: string; readonly messages: readonly ChatMessage[] } | undefined
  /** Replaces the Run's metrics. */
  readonly metrics?: RunMetrics | undefined
}
