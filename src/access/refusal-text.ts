/**
 * @module access/refusal-text
 * The one wording of a refusal a tool answers with: `Refused: ` and the reason as one sentence.
 * Reasons often end with their own full stop (an approver's hint does), so none is added twice.
 */

/** `Refused: REASON.`, with the reason's own final punctuation kept and none doubled. */
export function refusedText(reason: string): string {
  return `Refused: ${reason}${/[.!?]$/.test(reason) ? '' : '.'}`
}
