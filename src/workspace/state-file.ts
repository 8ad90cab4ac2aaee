/**
 * @module workspace/state-file
 * Reading and appending eitri's own state files (the fork write log, the drive catalog, the
 * approval log, the merge journal). A program or a crash can leave anything in them, so every
 * read is bounded (a size or line-length cap) and validated with a zod schema, and a file that
 * fails gets an `EitriError` `state_corrupt` naming the file, the line and what to do, never a
 * crash or a silently wrong state.
 *
 * Append-only logs tolerate what a crash in the middle of an append leaves: an unterminated
 * last line. The next append first ends that line and writes a seal line after it, so the torn
 * line stays excused once more records follow it; any other bad line is an error.
 */
import fs from 'node:fs'
import type { z } from 'zod'
import { EitriError } from '../errors/eitri-error.ts'
import { LineSplitter } from '../util/line-splitter.ts'

/** Written after a line a crash cut short, so a reader knows that line is not corruption. */
export const TORN_LINE_SEAL = '{"torn-line-above":true}'

/** Bytes read at a time from a log. */
const READ_CHUNK_BYTES = 64 * 1024

/** How a state file is named in errors, and what the reader should do about a bad one. */
export interface StateFileDescription {
  /** What the file is, for messages: `the fork write log`. */
  readonly what: string
  /** What to do about a corrupt file, one sentence. */
  readonly fix: string
}

/** Options of {@link readStateLines}. */
export interface StateLinesOptions extends StateFileDescription {
  /** Longest line accepted, in bytes. */
  readonly maxLineBytes: number
}

/**
 * The records of an append-only JSON-lines file, each checked against `schema`; `[]` when the
 * file does not exist. An unterminated last line (a crash mid-append) is dropped.
 *
 * @throws EitriError `state_corrupt` for a line that is too long, not JSON or not a record.
 */
export function readStateLines<Schema extends z.ZodType>(
  file: string,
  schema: Schema,
  options: StateLinesOptions,
): z.output<Schema>[] {
  let descriptor: number
  try {
    descriptor = fs.openSync(file, 'r')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return []
    throw error
  }
  const records: z.output<Schema>[] = []
  /** The last line that failed, excused only if a seal follows it. */
  let failed: { line: number; why: string } | undefined
  let lineNumber = 0
  const corrupt = (line: number, why: string): EitriError =>
    new EitriError(
      'state_corrupt',
      `${capitalize(options.what)} ${file} line ${line} is not a valid record (${why}). ${options.fix}`,
      { data: { file, line } },
    )
  const splitter = new LineSplitter(options.maxLineBytes, {
    line: (text) => {
      lineNumber++
      if (text === TORN_LINE_SEAL) {
        failed = undefined
        return
      }
      if (failed !== undefined) throw corrupt(failed.line, failed.why)
      if (text.trim() === '') return
      const parsed = parseRecord(text, schema)
      if (parsed.ok) records.push(parsed.value)
      else failed = { line: lineNumber, why: parsed.why }
    },
    overflow: (bytes) => {
      throw corrupt(lineNumber + 1, `longer than ${options.maxLineBytes} bytes: ${bytes} so far`)
    },
  })
  try {
    const buffer = Buffer.allocUnsafe(READ_CHUNK_BYTES)
    for (;;) {
      const read = fs.readSync(descriptor, buffer, 0, buffer.length, null)
      if (read === 0) break
      splitter.push(buffer.subarray(0, read))
    }
  } finally {
    fs.closeSync(descriptor)
  }
  // A whole line that is bad is corruption; an unterminated last line (still in the splitter)
  // is an append a crash cut short, and is dropped.
  if (failed !== undefined) throw corrupt(failed.line, failed.why)
  return records
}

/**
 * Appends one record as a JSON line and flushes it. If the file ends in a line a crash cut
 * short, that line is ended and sealed first, so readers keep excusing it.
 */
export function appendStateLine(file: string, record: unknown, mode = 0o600): void {
  // Opened for reading too: the last byte says whether a crash cut the last line short.
  const descriptor = fs.openSync(file, 'a+', mode)
  try {
    const size = fs.fstatSync(descriptor).size
    let prefix = ''
    if (size > 0) {
      const last = Buffer.alloc(1)
      fs.readSync(descriptor, last, 0, 1, size - 1)
      if (last[0] !== 0x0a) prefix = `\n${TORN_LINE_SEAL}\n`
    }
    // One write per line with O_APPEND: lines from several writers never interleave.
    fs.writeSync(descriptor, `${prefix}${JSON.stringify(record)}\n`)
    fs.fdatasyncSync(descriptor)
  } finally {
    fs.closeSync(descriptor)
  }
}

/** Options of {@link readStateJson}. */
export interface StateJsonOptions extends StateFileDescription {
  /** Largest file accepted, in bytes. */
  readonly maxBytes: number
}

/**
 * One JSON state file checked against `schema`; undefined when it does not exist.
 *
 * @throws EitriError `state_corrupt` for a file that is too large, not JSON or not valid.
 */
export function readStateJson<Schema extends z.ZodType>(
  file: string,
  schema: Schema,
  options: StateJsonOptions,
): z.output<Schema> | undefined {
  let descriptor: number
  try {
    descriptor = fs.openSync(file, 'r')
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined
    throw error
  }
  const corrupt = (why: string): EitriError =>
    new EitriError(
      'state_corrupt',
      `${capitalize(options.what)} ${file} is not valid (${why}). ${options.fix}`,
      { data: { file } },
    )
  let text: string
  try {
    const size = fs.fstatSync(descriptor).size
    if (size > options.maxBytes)
      throw corrupt(`${size} bytes, over the ${options.maxBytes}-byte limit`)
    // Read one byte past the limit: a file that grew since the size was taken is caught too.
    const buffer = Buffer.allocUnsafe(Math.min(size, options.maxBytes) + 1)
    let filled = 0
    for (;;) {
      const read = fs.readSync(descriptor, buffer, filled, buffer.length - filled, null)
      if (read === 0) break
      filled += read
      if (filled === buffer.length) break
    }
    if (filled > options.maxBytes) throw corrupt(`over the ${options.maxBytes}-byte limit`)
    text = buffer.toString('utf8', 0, filled)
  } finally {
    fs.closeSync(descriptor)
  }
  const parsed = parseRecord(text, schema)
  if (!parsed.ok) throw corrupt(parsed.why)
  return parsed.value
}

function parseRecord<Schema extends z.ZodType>(
  text: string,
  schema: Schema,
): { ok: true; value: z.output<Schema> } | { ok: false; why: string } {
  let json: unknown
  try {
    json = JSON.parse(text)
  } catch {
    return { ok: false, why: 'not JSON' }
  }
  const result = schema.safeParse(json)
  if (result.success) return { ok: true, value: result.data }
  const issue = result.error.issues[0]
  const where = issue === undefined || issue.path.length === 0 ? '' : `${issue.path.join('.')}: `
  return { ok: false, why: `${where}${issue?.message ?? 'invalid'}` }
}

function capitalize(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1)
}
