/**
 * @module eval/json-answer
 * A capability answer already turned into JSON (so its size was measured once, and it is not
 * serialized twice), with a hook the engine calls once the sandbox has it: until then its bytes
 * still count against the eval's budget.
 */

/** JSON ready to send, and what to do once it is sent (or dropped). */
export class JsonAnswer {
  readonly json: string
  readonly #delivered: (() => void) | undefined
  #done = false

  constructor(json: string, delivered?: () => void) {
    this.json = json
    this.#delivered = delivered
  }

  /** Called by the engine once the answer reached the sandbox or was dropped. Idempotent. */
  delivered(): void {
    if (this.#done) return
    this.#done = true
    this.#delivered?.()
  }
}
