/**
 * @module tool/truncate
 * Keeps a result within what a model can take in: the head and tail of an oversized content,
 * around one marker line that says what was cut.
 */
import type { ToolResult } from './tool-result.ts'

/** The most a result's content may hold, in estimated tokens. */
export const MAX_RESULT_TOKENS = 15_000
/** Characters per token, for the estimate. */
export const CHARS_PER_TOKEN = 4
/** Share of the budget kept from the start; the rest comes from the end. */
export const HEAD_SHARE = 0.4

/** Estimates tokens as characters / 4, rounded up. */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / CHARS_PER_TOKEN)
}

/**
 * Truncates `result.content` when it exceeds `maxTokens`: the first 40% and the last 60% of
 * the budget are kept, with a marker line between them. Sets `metadata.truncated`,
 * `originalTokens` and `keptTokens`. A result within budget is returned unchanged.
 */
export function truncateResult(
  result: ToolResult,
  maxTokens: number = MAX_RESULT_TOKENS,
): ToolResult {
  const originalTokens = estimateTokens(result.content)
  if (originalTokens <= maxTokens) return result
  const content = result.content
  const budgetChars = maxTokens * CHARS_PER_TOKEN
  const headChars = Math.floor(budgetChars * HEAD_SHARE)
  const provisionalMarker = marker(0, 0, originalTokens, maxTokens)
  const tailChars = budgetChars - headChars - provisionalMarker.length - 16
  const headEnd = safeBoundary(content, headChars)
  const tailStart = safeBoundary(content, content.length - tailChars)
  const removedChars = tailStart - headEnd
  const kept = `${content.slice(0, headEnd)}\n${marker(Math.ceil(removedChars / CHARS_PER_TOKEN), removedChars, originalTokens, maxTokens)}\n${content.slice(tailStart)}`
  return {
    ...result,
    content: kept,
    metadata: {
      ...result.metadata,
      truncated: true,
      originalTokens,
      keptTokens: estimateTokens(kept),
    },
  }
}

function marker(
  removedTokens: number,
  removedChars: number,
  totalTokens: number,
  budgetTokens: number,
): string {
  return `[OUTPUT TRUNCATED: removed ${removedTokens} tokens (${removedChars} characters) from the middle; showing the first 40% and last 60% of the ${budgetTokens}-token budget out of ${totalTokens} tokens. Ask for less at once: a range, a narrower pattern or a filter.]`
}

/** Moves an index off the second half of a surrogate pair, so no character is split. */
function safeBoundary(text: string, index: number): number {
  const code = text.charCodeAt(index)
  return code >= 0xdc00 && code <= 0xdfff ? index - 1 : index
}
