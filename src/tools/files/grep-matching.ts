/**
 * @module tools/files/grep-matching
 * The lines of one file that a grep pattern matches: run here for a small file, and in a
 * worker thread (`grep-worker.ts`) for a large one, which the caller ends at its deadline.
 *
 * RE2 never backtracks, but its time is the text's length times the pattern's size:
 * `[a-z]{1000}[0-9]` took about 13 s a megabyte, so one 20 MB file held eitri's one thread for
 * minutes, every connection and every cancel with it, and the grep's deadline (read between
 * files) never came (decision 0049).
 */
import { fileURLToPath } from 'node:url'
import path from 'node:path'
import { Worker } from 'node:worker_threads'
import { RE2JS } from 're2js'

/** Longest line shown; longer ones are cut. */
export const MAX_GREP_LINE_CHARS = 300

/** Files up to this size are matched on the calling thread; its cost is then a few tenths of a second at most. */
export const INLINE_MATCH_BYTES = 64 * 1024

/** What one file gave: its first matching lines (numbered, clipped) and how many matched in all. */
export interface FileHits {
  readonly lines: { line: number; text: string }[]
  readonly count: number
}

/** What the worker is sent. */
export interface MatchJob {
  readonly pattern: string
  readonly ignoreCase: boolean
  readonly bytes: Uint8Array
  readonly keep: number
}

/** Compiles a pattern as grep does: RE2, `^` and `$` at each line. @throws Error when invalid. */
export function compilePattern(pattern: string, ignoreCase: boolean): RE2JS {
  return RE2JS.compile(pattern, RE2JS.MULTILINE | (ignoreCase ? RE2JS.CASE_INSENSITIVE : 0))
}

/** Matches a file's text, keeping the first `keep` lines. */
export function matchText(regex: RE2JS, text: string, keep: number): FileHits {
  const lines: { line: number; text: string }[] = []
  let count = 0
  for (const hit of matchingLines(regex, text)) {
    count++
    if (lines.length < keep) lines.push({ line: hit.line, text: clip(hit.text) })
  }
  return { lines, count }
}

/** Each line holding a match, once, with its 1-based number. */
function* matchingLines(regex: RE2JS, text: string): Generator<{ line: number; text: string }> {
  const matcher = regex.matcher(text)
  let position = 0
  let line = 1
  let lineStart = 0
  while (position <= text.length && matcher.find(position)) {
    const start = matcher.start()
    if (start === text.length && (text.length === 0 || text.endsWith('\n'))) break
    for (
      let newline = text.indexOf('\n', lineStart);
      newline !== -1 && newline < start;
      newline = text.indexOf('\n', lineStart)
    ) {
      line++
      lineStart = newline + 1
    }
    const lineEnd = text.indexOf('\n', start)
    const end = lineEnd === -1 ? text.length : lineEnd
    yield { line, text: text.slice(lineStart, end) }
    position = end + 1
  }
}

function clip(line: string): string {
  const trimmed = line.endsWith('\r') ? line.slice(0, -1) : line
  return trimmed.length > MAX_GREP_LINE_CHARS
    ? `${trimmed.slice(0, MAX_GREP_LINE_CHARS)}…`
    : trimmed
}

const here = fileURLToPath(import.meta.url)
const WORKER_PATH = path.join(path.dirname(here), `grep-worker${path.extname(here)}`)

/**
 * One grep call's worker thread for large files, started at the first one. `match` answers
 * undefined when `stop` fired first (the deadline or the call's cancel): the worker is then
 * terminated mid-match, and this matcher is done.
 */
export class LargeFileMatcher {
  #worker: Worker | undefined

  async match(job: MatchJob, stop: AbortSignal): Promise<FileHits | undefined> {
    if (stop.aborted) return undefined
    const worker = (this.#worker ??= new Worker(WORKER_PATH))
    return new Promise<FileHits | undefined>((resolve, reject) => {
      const finish = (): void => {
        stop.removeEventListener('abort', onStop)
        worker.off('message', onMessage)
        worker.off('error', onError)
      }
      const onStop = (): void => {
        finish()
        void this.close()
        resolve(undefined)
      }
      const onMessage = (hits: FileHits): void => {
        finish()
        resolve(hits)
      }
      const onError = (error: Error): void => {
        finish()
        void this.close()
        reject(error)
      }
      stop.addEventListener('abort', onStop, { once: true })
      worker.on('message', onMessage)
      worker.on('error', onError)
      // Copied, not transferred: a small Buffer may share its memory with others.
      worker.postMessage(job)
    })
  }

  async close(): Promise<void> {
    const worker = this.#worker
    this.#worker = undefined
    await worker?.terminate()
  }
}
