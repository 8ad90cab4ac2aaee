/**
 * @module workspace/line-types
 * The words of main and its forks: what a diff, a merge and a guarded write to main answer, and
 * how the lines are opened.
 */
import type { DirectoryTree } from './directory-tree.ts'
import type { TreeChange } from './tree-merge.ts'
import type { LineChangeInfo, LineConflictInfo, LineMergeInfo } from '../ports/line-control.ts'

/** A changed path of a fork, with its diff: the tools' word for it. */
export type LineChange = LineChangeInfo

/** A conflict with both sides' text, for a person to read. */
export type ConflictReport = LineConflictInfo

/**
 * What a merge did. The variants tools see as they are come from {@link LineMergeInfo}; a merge
 * that happened also carries its changes and commit, and a refusal each refused path.
 */
export type MergeOutcome =
  | {
      readonly type: 'merged'
      readonly into: string
      readonly changes: readonly TreeChange[]
      readonly commit: string
      /** What the merge left behind that its reader should know (a fork's git commits). */
      readonly notes?: readonly string[]
    }
  | Extract<LineMergeInfo, { type: 'nothing' | 'conflict' | 'changed-on-disk' }>
  | {
      readonly type: 'refused'
      readonly into: string
      /** Each path main's policy refused, and why: nothing was merged. */
      readonly refused: readonly { readonly path: string; readonly reason: string }[]
    }

/** One path a merge into main would write, for the policy to judge. */
export interface MainWrite {
  readonly path: string
  readonly type: 'file' | 'symlink' | 'delete'
  readonly mode?: number
  readonly size?: number
  readonly target?: string
}

/**
 * Judges what a merge (or a restore) would write into a line by that line's policy: the
 * refusals (none: it may go on).
 */
export type MainWriteGuard = (
  line: string,
  writes: readonly MainWrite[],
) => Promise<readonly { path: string; reason: string }[]>

/** Hooks for what follows the lines (the store's rows). */
export interface LineHooks {
  readonly forked?: (parent: string, child: string) => Promise<void>
  /** Answers notes for the merge's answer (what of the fork the merge left behind). */
  readonly merged?: (child: string, parent: string) => Promise<readonly string[] | void>
  readonly discarded?: (child: string) => Promise<void>
}

/** Options of `WorkspaceLines.open`. */
export interface LinesOptions {
  readonly main: DirectoryTree
  readonly stateDir: string
  /** Workspace-relative paths never in history (eitri's own state inside the workspace). */
  readonly excluded?: readonly string[]
  /** Watch main for changes (a server): forks then cost what changed. @default false */
  readonly watch?: boolean
  readonly hooks?: LineHooks
  /**
   * Judges every path a merge or a restore would write into a line by that line's policy (the
   * same as every other door's): a merge combines what each side was allowed alone, and a
   * fork's tree knows nothing of main's repositories. Without it, merges are not judged.
   */
  readonly guardMain?: MainWriteGuard
  /** Files of main larger than this stay out of history and snapshots. @default 64 MiB */
  readonly maxFileBytes?: number
  /**
   * Whether a live process holds something in a fork's folder (the jail's kept layer, under its
   * mounts): such a fork is never pruned. @default none is held
   */
  readonly forkHeld?: (id: string) => boolean
}
