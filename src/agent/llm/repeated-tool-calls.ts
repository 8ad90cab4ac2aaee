/**
 * @module agent/llm/repeated-tool-calls
 * A model that makes the same tool call three times in a row is stuck: the third is not run and
 * the Run fails (`repeated-tool-call`) instead of spending its budget on a loop.
 */
import { canonicalJson } from '../canonical-json.ts'

/** How many identical calls in a row end the Run. */
export const REPEATED_CALL_LIMIT = 3

/** Counts identical consecutive tool calls (same name, same input however its keys are ordered). */
export class RepeatedToolCalls {
  #last: string | undefined
  #count = 0

  /** Notes a call about to run; true when it is the limit-th identical call in a row. */
  repeats(name: string, input: unknown): boolean {
    const key = canonicalJson({ name, input: input ?? null })
    this.#count = key === this.#last ? this.#count + 1 : 1
    this.#last = key
    return this.#count >= REPEATED_CALL_LIMIT
  }
}
