/**
 * @module store/line-record
 * Workspace lines as the store sees them: `main` and the forks made from it.
 */

import { MAIN_LINE, type LineState } from '../ports/line-control.ts'

// Only an open line can be read or written.
export { MAIN_LINE, type LineState }

/** Line names: what a fork id, a Run id or a branch name can be. */
export const LINE_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._:/-]{0,199}$/

/** One line. */
export interface LineRecord {
  readonly name: string
  /** The line it was forked from; null for `main`. */
  readonly parent: string | null
  /** The store's sequence number at the fork: the child sees the parent's rows up to it. */
  readonly forkSequence: number
  readonly state: LineState
  readonly createdAt: string
  /** When it was merged or discarded. */
  readonly closedAt: string | null
}

/** A row changed on both sides since the fork. */
export interface MergeConflict {
  readonly kind: 'task' | 'knowledge'
  /** The task id, or the knowledge entry's title. */
  readonly key: string
}

/** What a merge did. */
export interface MergeReport {
  readonly line: string
  readonly into: string
  /** Rows of the child that became the parent's. */
  readonly merged: number
  /** Rows changed on both sides; with `conflicts: 'theirs'` the child's version won. */
  readonly conflicts: readonly MergeConflict[]
}

/** How a merge treats rows changed on both sides since the fork. */
export interface MergeOptions {
  /**
   * `theirs`: the child's version wins and the conflict is reported; `refuse`: nothing is
   * merged and the call throws `conflict` listing them.
   * @default 'theirs'
   */
  readonly conflicts?: 'theirs' | 'refuse' | undefined
  readonly signal?: AbortSignal
}
