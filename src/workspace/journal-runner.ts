/**
 * @module workspace/journal-runner
 * Runs a merge, an undo or a restore through its journal: the journal is written durably
 * first, then main's files, then eitri's history (and for a restore the user's refs), and the
 * journal is removed last. A journal found at startup was cut by a crash and is finished, so
 * main ends wholly after the change, never half.
 */
import fs from 'node:fs'
import path from 'node:path'
import type { DirectoryTree } from './directory-tree.ts'
import { runGit } from './git/run-git.ts'
import { MAIN_REF, type WorkspaceHistory } from './history.ts'
import {
  applyEntries,
  readMergeJournal,
  removeStaleTemporaries,
  writeDurably,
  type MergeJournal,
  type MergeStep,
} from './merge-journal.ts'
import { applyRefMoves } from './user-git-refs.ts'

/** What the journal's steps need from the lines of a workspace. */
export interface JournalContext {
  readonly stateDir: string
  readonly main: DirectoryTree
  readonly history: WorkspaceHistory
  /** Marks a path of main changed (eitri's own write, for the watcher). */
  touch(relativePath: string): void
  /** Snapshots main after a restore wrote `paths`. */
  snapshotMain(message: string, paths: readonly string[]): Promise<unknown>
  /** Says the user's repository changed (a restore moved its refs). */
  gitTouched(): void
}

/** The references a restore could not move, with why. */
type FailedRefs = { name: string; reason: string }[]

const journalFile = (context: JournalContext) => path.join(context.stateDir, 'merge-journal.json')

/** Writes the journal durably, then carries it out. */
export async function runJournal(
  context: JournalContext,
  journal: MergeJournal,
  onStep?: (step: MergeStep) => void,
): Promise<FailedRefs> {
  writeDurably(journalFile(context), journal)
  onStep?.('journal-written')
  return finishJournal(context, journal, onStep)
}

/** Finishes a journal left by a crash, if there is one. */
export async function recoverJournal(context: JournalContext): Promise<void> {
  const journal = readMergeJournal(journalFile(context), 'in-progress')
  if (journal === undefined) return
  await removeStaleTemporaries(context.main, journal.entries)
  await finishJournal(context, journal)
}

async function finishJournal(
  context: JournalContext,
  journal: MergeJournal,
  onStep?: (step: MergeStep) => void,
): Promise<FailedRefs> {
  const { history } = context
  const paths = journal.entries.map((entry) => entry.path)
  await applyEntries(context.main, history.store, journal.entries, onStep)
  for (const changed of paths) context.touch(changed)
  onStep?.('files-written')
  let failed: FailedRefs = []
  if (journal.kind === 'restore') {
    await context.snapshotMain(`restore snapshot #${journal.snapshot ?? '?'}`, paths)
    // Each reference moves only if it still holds what the plan saw: replayed after a
    // crash, the ones already moved fail harmlessly and are left as they are.
    failed = await applyRefMoves(
      context.main.root,
      journal.refs ?? [],
      `eitri: restore snapshot #${journal.snapshot ?? '?'}`,
    )
    context.gitTouched()
  } else if (journal.kind === 'merge') {
    await runGit({ gitDir: history.gitDir }, ['update-ref', MAIN_REF, journal.commit])
    // main's index still describes the old files: refresh it for the paths merged
    await history.snapshotMain({ paths })
    writeDurably(path.join(context.stateDir, 'last-merge.json'), journal)
  } else {
    await history.snapshotMain({ paths, message: 'undo the last merge' })
  }
  onStep?.('ref-moved')
  fs.rmSync(journalFile(context), { force: true })
  return failed
}
