/**
 * @module workshop/session-checkpoints
 * A session's snapshots of main: around each call whose tool may change main, and around the
 * approvals asked during such a call (the time a person spends deciding is the person's, so
 * what they edit meanwhile is never taken for the call's doing).
 */
import type { Approver } from '../access/approval.ts'
import type { CallCheckpoints } from '../tool/call-checkpoints.ts'
import type { MainSnapshots } from '../workspace/main-snapshots.ts'
import type { SnapshotCall } from '../workspace/snapshot-record.ts'
import { MAIN_LINE } from '../ports/line-control.ts'

/** The longest call detail recorded. */
const MAX_DETAIL_CHARS = 200

/** What a session wires in: the checkpoints of its calls, and its approver wrapped. */
export interface SessionCheckpoints {
  readonly checkpoints: CallCheckpoints
  readonly approver: (approver: Approver) => Approver
  /** A background job on main, started by the running call: it changes main until `finished`. */
  readonly job: (finished: Promise<unknown>) => void
}

/** The checkpoints of one session, recorded under `session`. */
export function sessionCheckpoints(snapshots: MainSnapshots, session: string): SessionCheckpoints {
  const running: SnapshotCall[] = []
  return {
    checkpoints: {
      async around(call, work) {
        if (call.line !== MAIN_LINE) return work()
        const detail = describeInput(call.input)
        const described: SnapshotCall = {
          tool: call.tool,
          ...(detail === undefined ? {} : { detail }),
          session,
        }
        return snapshots.around(
          described,
          async () => {
            running.push(described)
            try {
              return await work()
            } finally {
              running.splice(running.indexOf(described), 1)
            }
          },
          { outcome: (result) => (result.type === 'success' ? 'success' : result.code) },
        )
      },
    },
    job(finished) {
      const current = running.at(-1)
      if (current !== undefined)
        snapshots.hold(
          { ...current, detail: `${current.detail ?? ''} (background job)`.trim() },
          finished,
        )
    },
    approver: (approver) => async (request, options) => {
      const current = running.at(-1)
      return current === undefined
        ? approver(request, options)
        : snapshots.aside(current, () => approver(request, options))
    },
  }
}

/** The part of a call's input that says what it does: its command, path, files or code. */
export function describeInput(input: unknown): string | undefined {
  if (typeof input !== 'object' || input === null) return undefined
  const fields = input as Record<string, unknown>
  let detail: string | undefined
  for (const key of ['command', 'path', 'snapshot', 'fork']) {
    const value = fields[key]
    if (typeof value === 'string' || typeof value === 'number') {
      detail = String(value)
      break
    }
  }
  if (detail === undefined && Array.isArray(fields.files))
    detail = fields.files
      .map((file: unknown) =>
        typeof file === 'object' && file !== null ? (file as { path?: unknown }).path : undefined,
      )
      .filter((file): file is string => typeof file === 'string')
      .join(', ')
  if (detail === undefined && typeof fields.code === 'string')
    detail = fields.code.trim().split('\n')[0]
  if (detail === undefined) return undefined
  const single = detail.replace(/\s+/g, ' ').trim()
  return single.length > MAX_DETAIL_CHARS ? `${single.slice(0, MAX_DETAIL_CHARS - 1)}…` : single
}
