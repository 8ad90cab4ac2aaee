/**
 * @module workspace/line-merge
 * Merging a fork into its parent and undoing the last merge into main. Merges are three-way;
 * into main they go through the journal, so main is never left half merged, and a merged fork
 * becomes read-only.
 */
import { randomBytes } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { EitriError } from '../errors/eitri-error.ts'
import { MAIN_LINE } from '../ports/line-control.ts'
import type { DirectoryTree } from './directory-tree.ts'
import { displayName, forkRef, writeFork, type ForkInfo } from './fork-registry.ts'
import type { ForkTree } from './fork-tree.ts'
import type { WorkspaceHistory } from './history.ts'
import { runJournal, type JournalContext } from './journal-runner.ts'
import type { ConflictReport, LineHooks, MergeOutcome } from './line-types.ts'
import {
  changedSince,
  journalEntryOf,
  readMergeJournal,
  type JournalEntry,
  type MergeStep,
} from './merge-journal.ts'
import { diffTrees, mergeCommits, type MergeConflict } from './tree-merge.ts'
import { isWithinAny } from '../util/relative-paths.ts'

/** What a merge and its undo need from the lines of a workspace; used only inside the queue. */
export interface MergeContext {
  readonly stateDir: string
  readonly main: DirectoryTree
  readonly history: WorkspaceHistory
  readonly hooks: LineHooks
  /** Workspace-relative paths never in history (eitri's own state inside the workspace). */
  readonly excluded: readonly string[]
  /** The head commit of a line, snapshotting main or committing a fork's writes first. */
  head(line: string): Promise<string>
  /** The fork named by id or name; throws for main. */
  fork(line: string): ForkInfo
  /** The files of a fork. */
  forkTree(info: ForkInfo): Promise<ForkTree>
  /** Main's policy on what a journal would write into `line`: the refusals. */
  guard(
    line: string,
    entries: readonly JournalEntry[],
  ): Promise<readonly { path: string; reason: string }[]>
  /** What the journal's steps need from the lines. */
  journal(): JournalContext
}

/** Merges `info` into its parent; see `WorkspaceLines.merge`. Only inside the queue. */
/** How a fork is merged. */
export interface MergeOptions {
  readonly onStep?: (step: MergeStep) => void
  /**
   * The fork's head as it was shown for approval ({@link WorkspaceLines.diffAt}): the merge is
   * refused if the fork moved since.
   */
  readonly expectedHead?: string
}

export async function mergeFork(
  context: MergeContext,
  info: ForkInfo,
  options: MergeOptions = {},
): Promise<MergeOutcome> {
  const theirs = await context.head(info.id)
  // What a person approved is the fork as shown: a write that landed while they were asked
  // (the agent goes on calling tools meanwhile) was never theirs to approve.
  if (options.expectedHead !== undefined && theirs !== options.expectedHead)
    throw new EitriError(
      'conflict',
      `Not merged: fork ${displayName(info)} changed after its merge was shown for approval, so what was approved is not what it holds now. Merge again to be asked about its changes as they are now.`,
    )
  if (info.parent !== MAIN_LINE) return mergeIntoFork(context, info, theirs)
  const ours = await context.head(MAIN_LINE)
  const result = await mergeCommits(context.history.gitDir, ours, theirs)
  if (result.type === 'conflict')
    return {
      type: 'conflict',
      into: MAIN_LINE,
      conflicts: await conflictReports(context.history, result.conflicts),
    }
  const changes = await diffTrees(context.history.gitDir, ours, result.tree)
  if (changes.length === 0) return { type: 'nothing', into: MAIN_LINE }
  const entries = changes.map((change) => journalEntryOf(change))
  // eitri's own state and configuration are never a merge's to write, whatever a fork holds.
  const hidden = entries.filter((entry) => isWithinAny(entry.path, context.excluded))
  if (hidden.length > 0)
    throw new EitriError(
      'protected_path',
      `Not merged: fork ${displayName(info)} changes eitri's own state or configuration (${hidden.map((entry) => entry.path).join(', ')}), which nothing may write into the live folder. Remove those files from the fork and merge again.`,
    )
  const refused = await context.guard(MAIN_LINE, entries)
  if (refused.length > 0) return { type: 'refused', into: MAIN_LINE, refused }
  options.onStep?.('planned')
  const changed = await changedSince(context.main, entries)
  if (changed.length > 0) return { type: 'changed-on-disk', into: MAIN_LINE, paths: changed }
  const commit = context.history.commit(
    result.tree,
    [ours, theirs],
    `merge ${displayName(info)} into main`,
  )
  await runJournal(
    context.journal(),
    {
      id: randomBytes(6).toString('hex'),
      kind: 'merge',
      fork: info.id,
      commit,
      previous: ours,
      entries,
    },
    options.onStep,
  )
  const notes = await markMerged(context, info, MAIN_LINE)
  return { type: 'merged', into: MAIN_LINE, changes, commit, ...notes }
}

/**
 * What undoing the last merge came to: undone, refused for files changed since, or nothing.
 * Undone, the merged fork stays merged and read-only; what the merge brought goes on in
 * `reopened`, a new open fork of main (none when the merge changed nothing).
 */
export type UndoOutcome =
  | {
      type: 'undone'
      paths: string[]
      /** The fork whose merge was undone, by name (its id when it has none). */
      merged: string
      reopened?: ForkInfo
    }
  | { type: 'changed-on-disk'; paths: string[] }
  | { type: 'nothing' }

/** An undo done inside the queue: what the merge wrote, for the fork that takes it on. */
export type UndoneInQueue =
  | { type: 'undone'; paths: string[]; fork: string | undefined; entries: readonly JournalEntry[] }
  | { type: 'changed-on-disk'; paths: string[] }
  | { type: 'nothing' }

/** Undoes the last merge into main; see `WorkspaceLines.undoMerge`. Only inside the queue. */
export async function undoMerge(
  context: MergeContext,
  options: { onStep?: (step: MergeStep) => void } = {},
): Promise<UndoneInQueue> {
  const file = path.join(context.stateDir, 'last-merge.json')
  const last = readMergeJournal(file, 'last-merge')
  if (last === undefined) return { type: 'nothing' as const }
  const reversed = last.entries.map((entry) => ({
    path: entry.path,
    ...(entry.after === undefined ? {} : { before: entry.after }),
    ...(entry.before === undefined ? {} : { after: entry.before }),
  }))
  const changed = await changedSince(context.main, reversed)
  if (changed.length > 0) return { type: 'changed-on-disk' as const, paths: changed }
  const current = await context.head(MAIN_LINE)
  await runJournal(
    context.journal(),
    {
      id: randomBytes(6).toString('hex'),
      kind: 'undo',
      commit: '',
      previous: current,
      entries: reversed,
    },
    options.onStep,
  )
  fs.rmSync(file, { force: true })
  return {
    type: 'undone' as const,
    paths: reversed.map((entry) => entry.path),
    fork: last.fork,
    entries: last.entries,
  }
}

/** Both sides' text of each conflict, for a person to read. */
export async function conflictReports(
  history: WorkspaceHistory,
  conflicts: readonly MergeConflict[],
): Promise<ConflictReport[]> {
  const text = async (oid: string | undefined): Promise<string | undefined> => {
    if (oid === undefined) return undefined
    const content = (await history.store.require(oid)).content
    return content.includes(0) ? `[binary, ${content.byteLength} bytes]` : content.toString('utf8')
  }
  return Promise.all(
    conflicts.map(async (conflict) => ({
      path: conflict.path,
      ours: await text(conflict.ours?.oid),
      theirs: await text(conflict.theirs?.oid),
    })),
  )
}

async function mergeIntoFork(
  context: MergeContext,
  info: ForkInfo,
  theirs: string,
): Promise<MergeOutcome> {
  const parent = context.fork(info.parent)
  const ours = await context.head(parent.id)
  const result = await mergeCommits(context.history.gitDir, ours, theirs)
  if (result.type === 'conflict')
    return {
      type: 'conflict',
      into: parent.id,
      conflicts: await conflictReports(context.history, result.conflicts),
    }
  const changes = await diffTrees(context.history.gitDir, ours, result.tree)
  if (changes.length === 0) return { type: 'nothing', into: parent.id }
  // Each side passed its own fork's policy; together they may not (a repository completed
  // from parts written in two forks).
  const refused = await context.guard(
    parent.id,
    changes.map((change) => journalEntryOf(change)),
  )
  if (refused.length > 0) return { type: 'refused', into: parent.id, refused }
  const commit = context.history.commit(
    result.tree,
    [ours, theirs],
    `merge ${displayName(info)} into ${displayName(parent)}`,
  )
  await context.history.advanceRef(forkRef(parent.id), commit, ours, parent.forkPoint)
  ;(await context.forkTree(parent)).rebase(result.tree)
  const notes = await markMerged(context, info, parent.id)
  return { type: 'merged', into: parent.id, changes, commit, ...notes }
}

/**
 * A merged fork becomes read-only, and what follows the lines (the store's rows) merges too:
 * answers the notes of the hook, for the merge's answer.
 */
async function markMerged(
  context: MergeContext,
  info: ForkInfo,
  into: string,
): Promise<{ notes?: readonly string[] }> {
  const merged = { ...info, merged: { into, at: new Date().toISOString() } }
  writeFork(context.stateDir, merged)
  ;(await context.forkTree(info)).freeze(
    `fork ${displayName(info)} was merged into ${into} and is read-only now; fork again to go on.`,
  )
  const notes = await context.hooks.merged?.(info.id, into)
  return notes === undefined || notes.length === 0 ? {} : { notes }
}
