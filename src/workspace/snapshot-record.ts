/**
 * @module workspace/snapshot-record
 * What one snapshot of main records, and how it is written in its commit's message: a line a
 * person reads in `git log`, then the record as JSON, parsed back with a schema (a record that
 * does not parse is skipped, never trusted).
 */
import { z } from 'zod'

/**
 * When a snapshot was taken: `open` (in the background when a workshop opened, only if main
 * changed since the last one), `before` a call that may change main, `after` it.
 */
export type SnapshotKind = 'open' | 'before' | 'after'

/** The call a snapshot was taken for. */
export interface SnapshotCall {
  /** The tool (`shell`, `write_file`) or command (`eitri merge`). */
  readonly tool: string
  /** The command of a shell call, the path of a file tool, the fork of a merge. */
  readonly detail?: string
  /** The session that made the call (`cli` for a person at the terminal). */
  readonly session?: string
}

/** One snapshot as listed. */
export interface SnapshotRecord {
  /** Its number: snapshots are numbered in the order they were taken. */
  readonly id: number
  /** The record's commit in eitri's history (`files/` holds main's files, `git-refs` the refs). */
  readonly commit: string
  readonly kind: SnapshotKind
  readonly time: string
  readonly call?: SnapshotCall
  /** How a call ended (`after` snapshots): `success` or an error code. */
  readonly outcome?: string
  /**
   * A `before` taken as a call went on after a person answered it (the wait between is the
   * person's time: main-snapshots.ts `aside`). Not listed: the call's first `before` stands
   * for it (see {@link isListedSnapshot}).
   */
  readonly resumed?: true
  /**
   * Paths left out of this snapshot (at most {@link MAX_LISTED_SKIPPED}): files over the size
   * bound, nested repositories (`folder/`), paths git refuses to store.
   */
  readonly skipped: readonly string[]
  /** How many paths were left out in all. */
  readonly skippedCount: number
  /** Why the user's git references are not recorded, when they are not. */
  readonly refsNote?: string
  /** Calls that may change main still running when it was taken, in the process that took it. */
  readonly inFlight: number
  /** The process that took it: in-flight counts compare only within one process. */
  readonly owner: string
}

/** The most skipped paths a record lists by name. */
export const MAX_LISTED_SKIPPED = 200

const recordBody = z.object({
  version: z.literal(1),
  kind: z.enum(['open', 'before', 'after']),
  time: z.string(),
  call: z
    .object({
      tool: z.string(),
      detail: z.string().optional(),
      session: z.string().optional(),
    })
    .optional(),
  outcome: z.string().optional(),
  resumed: z.literal(true).optional(),
  skipped: z.array(z.string()).default([]),
  skippedCount: z.number().int().nonnegative().default(0),
  refsNote: z.string().optional(),
  inFlight: z.number().int().nonnegative(),
  owner: z.string(),
})

/** A record's fields before it has a number and a commit. */
export type SnapshotFields = Omit<SnapshotRecord, 'id' | 'commit'>

/** The commit message of a record. */
export function encodeRecord(fields: SnapshotFields): string {
  const body = {
    version: 1,
    ...fields,
    skipped: fields.skipped.slice(0, MAX_LISTED_SKIPPED),
  }
  return `${recordTitle(fields)}\n\n${JSON.stringify(body)}`
}

/** The record in a commit message, or undefined when it does not parse. */
export function decodeRecord(
  id: number,
  commit: string,
  message: string,
): SnapshotRecord | undefined {
  const json = message.slice(message.indexOf('\n\n') + 2).trim()
  let value: unknown
  try {
    value = JSON.parse(json)
  } catch {
    return undefined
  }
  const parsed = recordBody.safeParse(value)
  if (!parsed.success) return undefined
  const { version: _version, call, outcome, refsNote, resumed, ...rest } = parsed.data
  return {
    id,
    commit,
    ...rest,
    ...(call === undefined
      ? {}
      : {
          call: {
            tool: call.tool,
            ...(call.detail === undefined ? {} : { detail: call.detail }),
            ...(call.session === undefined ? {} : { session: call.session }),
          },
        }),
    ...(outcome === undefined ? {} : { outcome }),
    ...(resumed === undefined ? {} : { resumed }),
    ...(refsNote === undefined ? {} : { refsNote }),
  }
}

/** One line saying what a snapshot was taken for. */
export function recordTitle(fields: Pick<SnapshotFields, 'kind' | 'call' | 'resumed'>): string {
  if (fields.kind === 'open' || fields.call === undefined) return 'at open'
  const detail = fields.call.detail === undefined ? '' : `: ${fields.call.detail}`
  const kind = fields.resumed === true ? "resumed after a person's answer:" : fields.kind
  return `${kind} ${fields.call.tool}${detail}`.replace(/\s+/g, ' ').slice(0, 200)
}
