/**
 * @module tool/line-control
 * The lines of work a session can see and switch between: `main` and its forks. The
 * workspace layer implements it; the workspace tools and the room operations use it.
 */
import type { WorkspaceView } from './workspace-view.ts'

/** The line every workspace starts with, and the name that always means it. */
export const MAIN_LINE = 'main'

/**
 * What became of a line: `open` (it can be read and written), `merged` into its parent (read
 * only now) or `discarded`.
 */
export const LINE_STATES = Object.freeze(['open', 'merged', 'discarded'] as const)

/** One of {@link LINE_STATES}. */
export type LineState = (typeof LINE_STATES)[number]

/** A fork as tools see it. */
export interface LineInfo {
  readonly id: string
  readonly name?: string
  readonly parent: string
  readonly created: string
  readonly readOnly: boolean
}

/** A fork with what became of it, as listings show it. */
export interface LineOverviewInfo extends LineInfo {
  readonly state: LineState
  /** Files it changed since it was forked. */
  readonly changes: number
  readonly lastActivity: string
}

/** A changed path of a fork. */
export interface LineChangeInfo {
  readonly path: string
  readonly status: 'added' | 'modified' | 'deleted'
  readonly binary: boolean
  readonly diff?: string
}

/** A conflicting path with both sides. */
export interface LineConflictInfo {
  readonly path: string
  readonly ours: string | undefined
  readonly theirs: string | undefined
}

/** What a merge did, as tools report it. */
export type LineMergeInfo =
  | {
      readonly type: 'merged'
      readonly into: string
      readonly paths: readonly string[]
      /** What the merge left behind that its reader should know (a fork's git commits). */
      readonly notes?: readonly string[]
    }
  | { readonly type: 'nothing'; readonly into: string }
  | {
      readonly type: 'conflict'
      readonly into: string
      readonly conflicts: readonly LineConflictInfo[]
    }
  | { readonly type: 'changed-on-disk'; readonly into: string; readonly paths: readonly string[] }
  | { readonly type: 'refused'; readonly into: string; readonly reason: string }

/** A snapshot of main, taken around a call that could change it. */
export interface SnapshotInfo {
  /** Its number, for `workspace_restore` and `eitri restore`. */
  readonly id: number
  readonly commit: string
  /** `before` or `after` a call, or `open` (main changed while no eitri call ran). */
  readonly kind: 'open' | 'before' | 'after'
  readonly time: string
  /** The call it was taken for: tool, command or path, session. */
  readonly call?: { readonly tool: string; readonly detail?: string; readonly session?: string }
  /** A `before` taken as the call went on after a person answered it (not listed). */
  readonly resumed?: true
  /** Paths left out: over the size bound, nested repositories (`folder/`), refused by git. */
  readonly skipped: readonly string[]
  readonly skippedCount: number
}

/**
 * Whether a snapshot is one a person picks from (`eitri log`, `workspace_snapshots`): taken at
 * open or before a call. Not the one after a call, nor where a call went on after a person's
 * answer: each call is listed once, by the snapshot before it started, which undoes all of it.
 */
export function isListedSnapshot(snapshot: Pick<SnapshotInfo, 'kind' | 'resumed'>): boolean {
  return snapshot.kind !== 'after' && snapshot.resumed !== true
}

/** A git reference a restore moved back: from its value before (absent: gone) to the recorded one. */
export interface RestoredRef {
  readonly name: string
  readonly from?: string
  readonly to: string
}

/** What a restore did, or why it did nothing. */
export type RestoreOutcome =
  | {
      readonly type: 'restored'
      readonly snapshot: number
      readonly paths: readonly string[]
      /** References moved back. */
      readonly refs: readonly RestoredRef[]
      /** References that could not be moved back, with git's reason. */
      readonly refsFailed: readonly { readonly name: string; readonly reason: string }[]
      /** References made since the snapshot: kept. */
      readonly refsKept: readonly string[]
      /** Why references were not restored, when they were not. */
      readonly refsNote?: string
      /** Paths left alone because they were left out of snapshots (then or now). */
      readonly tooLarge: readonly string[]
    }
  | { readonly type: 'nothing'; readonly snapshot: number; readonly tooLarge: readonly string[] }
  /** A person changed these since the snapshot: restoring them needs `force`. */
  | {
      readonly type: 'changed-since'
      readonly snapshot: number
      readonly paths: readonly string[]
      readonly refs: readonly string[]
    }
  /** The line's policy refuses writing these paths now (a hooks path named since); nothing changed. */
  | {
      readonly type: 'protected'
      readonly snapshot: number
      readonly refused: readonly { readonly path: string; readonly reason: string }[]
    }
  /** These files changed on disk while restoring; nothing changed. */
  | {
      readonly type: 'changed-on-disk'
      readonly snapshot: number
      readonly paths: readonly string[]
    }

/** A restore as tools report it: refused when no person approved it. */
export type RestoreInfo = RestoreOutcome | { readonly type: 'refused'; readonly reason: string }

/** What switching lines did: refused when only a person may allow it and none did. */
export type LineSwitch =
  | { readonly type: 'switched'; readonly line: string }
  | { readonly type: 'refused'; readonly line: string; readonly reason: string }

/** A write a caller is about to make to a line, so a person can be asked when one must be. */
export interface LineWriteIntent {
  /** One line a prompt can show: what will be written. */
  readonly summary: string
  readonly tool: string
  /** Exactly what will be written (each path with a digest of its content): the approval's input. */
  readonly writes: unknown
}

/**
 * The lines of the session's workspace, as far as the session may reach them: every method
 * that takes a line looks it up among the forks this session may act on, and a fork it may not
 * act on answers `not_found`, exactly like one that does not exist.
 */
export interface LineControl {
  /** The line this session's tools act on (`main` or a fork id). */
  readonly current: string
  list(): readonly LineInfo[]
  /** The forks this session may see, discarded ones included, with state, changes and activity. */
  overview(): Promise<readonly LineOverviewInfo[]>
  /** Finds a line by id or name; `main` answers `main`. Throws `not_found`. */
  resolve(idOrName: string): string
  fork(options: { name?: string; from?: string }): Promise<LineInfo>
  /**
   * Binds the session's tools to a line from the next call on. Back onto main from an
   * isolated session only with a person's approval.
   */
  use(line: string, options: { signal: AbortSignal }): Promise<LineSwitch>
  diff(fork: string): Promise<readonly LineChangeInfo[]>
  review(fork: string): Promise<{
    tier: 'trivial' | 'reviewable' | 'conflict'
    changes: readonly LineChangeInfo[]
    conflicts: readonly LineConflictInfo[]
  }>
  /** Merges into the fork's parent; into main only with a person's approval. */
  merge(fork: string, options: { signal: AbortSignal }): Promise<LineMergeInfo>
  discard(fork: string): Promise<void>
  log(line: string): Promise<readonly { commit: string; message: string; time: string }[]>
  /** Commits a line's writes with a message (room_write). */
  commit(line: string, message: string): Promise<string>
  /**
   * The files of a line as this session's tools see them (policy and access applied). Main
   * seen from an isolated session is read-only unless `write` is given and a person approves
   * it (throws `permission_denied` when not). `signal` is the call's: a person asked (for main,
   * or by the view's access) is no longer asked once it aborts.
   */
  workspace(
    line: string,
    options: { signal: AbortSignal; write?: LineWriteIntent },
  ): Promise<WorkspaceView>
  /** The snapshots of main, newest first. */
  snapshots(): Promise<readonly SnapshotInfo[]>
  /**
   * Puts main's files (or `paths`) back as they were at a snapshot, with a person's approval;
   * refuses what a person changed since, unless `force`.
   */
  restore(
    snapshot: string,
    options: { paths?: readonly string[]; force?: boolean; signal: AbortSignal },
  ): Promise<RestoreInfo>
}
