/**
 * @module access/approval-log
 * Every decision about an action that needed a person, recorded: when, which tool, a digest of
 * the input, the decision and who made it. Append-only JSON lines in the state folder.
 */
import { createHash } from 'node:crypto'
import fs from 'node:fs/promises'
import path from 'node:path'

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
    // One write per line with O_APPEND: lines from several processes never interleave.
    await fs.appendFile(this.file, `${JSON.stringify(entry)}\n`, { mode: 0o600 })
  }

  async list(): Promise<ApprovalRecord[]> {
    let text: string
    try {
      text = await fs.readFile(this.file, 'utf8')
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return []
      throw error
    }
    return text
      .split('\n')
      .filter((line) => line.trim() !== '')
      .flatMap((line) => {
        try {
          return [JSON.parse(line) as ApprovalRecord]
        } catch {
          return [] // a torn last line after a crash
        }
      })
  }
}
