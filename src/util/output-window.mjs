// @ts-check
/**
 * @module util/output-window
 * What a model gets to see of a stream that may be huge: its beginning and its end, with the
 * middle dropped and counted, and every run of identical lines shown once with its count. A
 * failing test suite that prints one error 50,000 times still shows how it started and how it
 * ended, and costs memory for the window only.
 *
 * It imports nothing but Node's own modules: the warm jail's supervisor, which runs inside the
 * jail with only Node and its own files mounted, uses it too. Plain JavaScript, typed through
 * JSDoc and checked by TypeScript, so Node starts it without stripping types (which costs a
 * Node start about 200 ms more here, for every warm jail started from the sources).
 */
import { StringDecoder } from 'node:string_decoder'

/**
 * Characters {@link OutputWindow.text} may add to its limit: the marker where the middle was
 * dropped, and a repeat count still pending at the end.
 */
export const OUTPUT_MARKER_ROOM = 200

/** Identical lines in a row from which a run is collapsed into one line and a count. */
const COLLAPSE_FROM = 3

/** Characters the tail may hold beyond twice its limit before it is cut back (for tiny limits). */
const TAIL_SLACK = 4096

/** Keeps the head and the tail of a stream, with runs of identical lines collapsed. */
export class OutputWindow {
  /** @readonly */
  #decoder = new StringDecoder('utf8')
  /** @readonly @type {number} */
  #headLimit
  /** @readonly @type {number} */
  #tailLimit
  #head = ''
  #tail = ''
  #dropped = 0
  /** The last complete line written, and how many times it came again since. @type {string | undefined} */
  #lastLine
  #repeats = 0
  /** The unfinished line at the end of what arrived. */
  #partial = ''

  /** @param {number} limit characters kept */
  constructor(limit) {
    const kept = Math.max(0, Math.floor(limit))
    this.#headLimit = Math.ceil(kept / 2)
    this.#tailLimit = kept - this.#headLimit
  }

  /**
   * Adds a chunk of the stream.
   * @param {Buffer | string} chunk
   * @returns {void}
   */
  push(chunk) {
    const text = typeof chunk === 'string' ? chunk : this.#decoder.write(chunk)
    let start = 0
    for (;;) {
      const newline = text.indexOf('\n', start)
      if (newline < 0) break
      const line = this.#partial + text.slice(start, newline + 1)
      this.#partial = ''
      this.#line(line)
      start = newline + 1
    }
    this.#partial += text.slice(start)
    // A line that never ends (a progress bar, a minified file) is written as it comes.
    if (this.#partial.length > this.#headLimit + this.#tailLimit) {
      this.#flushRepeats()
      this.#lastLine = undefined
      this.#write(this.#partial)
      this.#partial = ''
    }
  }

  /**
   * The head, a marker where the middle was dropped, and the tail. Writes out what is still
   * pending (a repeat count, an unfinished line), so call it when the stream ended.
   * @returns {string}
   */
  text() {
    this.#flushRepeats()
    if (this.#partial !== '') {
      this.#lastLine = undefined
      this.#write(this.#partial)
      this.#partial = ''
    }
    this.#trimTail()
    if (this.#dropped === 0) return this.#head + this.#tail
    // Start the tail at a line's start, so the first line after the marker is whole.
    const newline = this.#tail.indexOf('\n')
    const cut = newline >= 0 && newline < this.#tail.length - 1 ? newline + 1 : 0
    const dropped = this.#dropped + cut
    const separator = this.#head === '' || this.#head.endsWith('\n') ? '' : '\n'
    return `${this.#head}${separator}[... ${dropped} characters dropped here: the output's beginning is above, its end below ...]\n${this.#tail.slice(cut)}`
  }

  /**
   * Characters dropped from the middle (collapsed repeats are not counted here).
   * @returns {number}
   */
  get droppedChars() {
    this.#trimTail()
    return this.#dropped
  }

  /** @param {string} line */
  #line(line) {
    if (line === this.#lastLine) {
      this.#repeats++
      return
    }
    this.#flushRepeats()
    this.#lastLine = line
    this.#write(line)
  }

  /** @returns {void} */
  #flushRepeats() {
    if (this.#repeats === 0 || this.#lastLine === undefined) return
    let repeats = this.#repeats
    this.#repeats = 0
    if (repeats + 1 < COLLAPSE_FROM) return this.#write(this.#lastLine.repeat(repeats))
    // The count must follow its line: if the line went to the head and the middle is being
    // dropped, the line is written again in the tail first.
    const shown =
      this.#tail === '' ? this.#head.endsWith(this.#lastLine) : this.#tail.endsWith(this.#lastLine)
    if (!shown) {
      this.#write(this.#lastLine)
      repeats--
    }
    this.#write(`[... the line above repeated ${repeats} more times]\n`)
  }

  /** @param {string} text */
  #write(text) {
    const room = this.#headLimit - this.#head.length
    if (room > 0) {
      this.#head += text.slice(0, room)
      text = text.slice(room)
    }
    if (text === '') return
    this.#tail += text
    // Cut the tail back only once it holds twice its limit: cutting at every line copied the
    // whole tail for each line (2 million short lines took seconds), cutting at double the
    // limit copies each character at most once more.
    if (this.#tail.length > 2 * this.#tailLimit + TAIL_SLACK) this.#trimTail()
  }

  /** Drops from the tail's start what is over its limit. @returns {void} */
  #trimTail() {
    const over = this.#tail.length - this.#tailLimit
    if (over > 0) {
      this.#dropped += over
      this.#tail = this.#tail.slice(over)
    }
  }
}
