/**
 * @module tool/tool-result
 * What every tool call answers: a string the model can read, plus metadata for programs.
 */
import type { ErrorCode } from '../errors/eitri-error.ts'

/** Structured facts about a result, for programs rather than the model. */
export type ToolMetadata = Record<string, unknown>

/** A call that did its job. */
export interface ToolSuccess {
  readonly type: 'success'
  readonly content: string
  readonly metadata: ToolMetadata
}

/** A call that did not; `content` says what went wrong and what to do instead. */
export interface ToolError {
  readonly type: 'error'
  readonly code: ErrorCode
  readonly content: string
  readonly metadata: ToolMetadata
}

/** The answer to one tool call. */
export type ToolResult = ToolSuccess | ToolError

/**
 * Builds a success result.
 *
 * @example
 * return toolSuccess('Wrote 12 bytes to notes.md', { path: 'notes.md', bytes: 12 })
 */
export function toolSuccess(content: string, metadata: ToolMetadata = {}): ToolSuccess {
  return { type: 'success', content, metadata }
}

/**
 * Builds an error result. The content must name what was refused and what to do instead.
 *
 * @example
 * return toolError('not_found', 'File not found: notes.md')
 */
export function toolError(
  code: ErrorCode,
  content: string,
  metadata: ToolMetadata = {},
): ToolError {
  return { type: 'error', code, content, metadata }
}
