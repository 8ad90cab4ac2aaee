/**
 * @module eval/sandbox/position-map
 * Maps a line and column of the rewritten script back to the guest's own code, so stack traces
 * point where the guest wrote the code, not where the wrapper moved it.
 */

/** A place where rewritten and original text line up again after an edit. */
export interface Anchor {
  readonly generated: number
  readonly original: number
  /** Text the rewrite put here: every position in it maps to `original` itself. */
  readonly inserted?: boolean
}

/** Maps positions of a rewritten text back to the text it was made from. */
export class PositionMap {
  readonly #anchors: readonly Anchor[]
  readonly #original: string
  readonly #generated: string
  // Computed at the first lookup: most evals never throw.
  #generatedLines: readonly number[] | undefined
  #originalLines: readonly number[] = []

  /** `anchors` sorted by `generated`. */
  constructor(original: string, generated: string, anchors: readonly Anchor[]) {
    this.#anchors = anchors
    this.#original = original
    this.#generated = generated
  }

  /** The original 1-based line and column of a generated one, or undefined past the code. */
  original(line: number, column: number): { line: number; column: number } | undefined {
    if (this.#generatedLines === undefined) {
      this.#generatedLines = lineStarts(this.#generated)
      this.#originalLines = lineStarts(this.#original)
    }
    const start = this.#generatedLines[line - 1]
    if (start === undefined) return undefined
    const offset = start + column - 1
    let anchor: Anchor | undefined
    for (const candidate of this.#anchors) {
      if (candidate.generated > offset) break
      anchor = candidate
    }
    if (anchor === undefined) return undefined
    const original =
      anchor.inserted === true
        ? anchor.original
        : anchor.original + Math.max(0, offset - anchor.generated)
    let originalLine = 0
    while (
      originalLine + 1 < this.#originalLines.length &&
      (this.#originalLines[originalLine + 1] as number) <= original
    ) {
      originalLine++
    }
    if (original > (this.#originalLines.at(-1) ?? 0) + 100_000) return undefined
    return {
      line: originalLine + 1,
      column: original - (this.#originalLines[originalLine] as number) + 1,
    }
  }
}

function lineStarts(text: string): number[] {
  const starts = [0]
  for (let index = text.indexOf('\n'); index !== -1; index = text.indexOf('\n', index + 1)) {
    starts.push(index + 1)
  }
  return starts
}
