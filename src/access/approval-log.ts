/**
 * @module access/approval-log
 * Every decision about an action that needed a person, recorded: when, which tool, a digest of
 * the input, the decision and who made it. Append-only JSON lines in the state folder.
 */
import { createHash } from 'node:crypto'
import fs from 'node:fs/promises'
import path from 'node:path'
import { z } from 'zod'
import { appendStateLine, readStateLines } from '../workspace/state-file.ts'

/** One recorded decision. */
export interface ApprovalRecord {
  readonly time: string
  readonly tool: string
  readonly inputDigest: string
  readonly summary: string
  readonly decision: 'approved' | 'approved-for-session' | 'denied'
  readonly by: string
  readonly reason?: string
  readonly access: string
  readonly dangerous: boolean
}

/** A record read back from the log, where a crash can cut a line short. */
const approvalRecordSchema = z.strictObject({
  time: z.iso.datetime(),
  tool: z.string().max(1000),
  inputDigest: z.string().max(100),
  summary: z.string(),
  decision: z.enum(['approved', 'approved-for-session', 'denied']),
  by: z.string().max(1000),
  reason: z.string().exactOptional(),
  access: z.string().max(100),
  dangerous: z.boolean(),
}) satisfies z.ZodType<ApprovalRecord>

/** Longest line of the log. */
const MAX_APPROVAL_LINE_BYTES = 1024 * 1024
/** Characters of a summary or reason kept in the log, so every line stays far below the cap. */
const MAX_LOGGED_TEXT_CHARS = 10_000

/** Where decisions go. */
export interface ApprovalRecorder {
  record(entry: ApprovalRecord): Promise<void>
  list(): Promise<ApprovalRecord[]>
}

/** The sha256 of an input's JSON, so the log shows what was decided without its content. */
export function digestInput(input: unknown): string {
  return `sha256:${createHash('sha256')
    .update(JSON.stringify(input ?? null))
    .digest('hex')}`
}

/** A recorder writing `approvals.jsonl` in `folder`. */
export class JsonLinesApprovalLog implements ApprovalRecorder {
  readonly file: string

  constructor(folder: string) {
    this.file = path.join(folder, 'approvals.jsonl')
  }

  async record(entry: ApprovalRecord): Promise<void> {
    await fs.mkdir(path.dirname(this.file), { recursive: true, mode: 0o700 })
    appendStateLine(this.file, {
      ...entry,
      summary: clip(entry.summary),
      ...(entry.reason === undefined ? {} : { reason: clip(entry.reason) }),
    })
  }

  /**
   * Every record; a last line a crash cut short is dropped.
   *
   * @throws EitriError `state_corrupt` naming the file and line of any other bad line.
   */
  async list(): Promise<ApprovalRecord[]> {
    return readStateLines(this.file, approvalRecordSchema, {
      what: 'the approval log',
      maxLineBytes: MAX_APPROVAL_LINE_BYTES,
      fix: 'Repair or remove that line; new decisions are still recorded after it.',
    })
  }
}

function clip(text: string): string {
  return text.length <= MAX_LOGGED_TEXT_CHARS
    ? text
    : `${text.slice(0, MAX_LOGGED_TEXT_CHARS)}… [${text.length - MAX_LOGGED_TEXT_CHARS} more characters]`
}
