/**
 * @module workspace/main-restore
 * Putting main's files (or some of them) back as a snapshot held them, through the journal; a
 * whole restore also moves the user's git references back. What `WorkspaceLines.restore` does
 * inside the queue of writers to main.
 */
import { randomBytes } from 'node:crypto'
import type { RestoreOutcome } from '../ports/line-control.ts'
import { MAIN_LINE } from '../ports/line-control.ts'
import { runJournal } from './journal-runner.ts'
import type { MergeContext } from './line-merge.ts'
import type { MainSnapshots } from './main-snapshots.ts'
import { changedSince, journalEntryOf, type MergeStep } from './merge-journal.ts'
import { planRestore } from './restore-plan.ts'

/** What a restore needs from the lines. */
export interface RestoreContext extends Pick<
  MergeContext,
  'main' | 'history' | 'guard' | 'journal'
> {
  readonly snapshots: MainSnapshots
  /** Snapshots main as it is now. */
  snapshotMain(): Promise<{ commit: string; tree: string; skipped: readonly string[] }>
}

/**
 * Restores main to `snapshot`; see `WorkspaceLines.restore`. Only inside the queue. `paths`
 * are checked already (`checkRestorePath`).
 */
export async function restoreMain(
  context: RestoreContext,
  snapshot: string | number,
  options: {
    readonly paths?: readonly string[]
    readonly force?: boolean
    readonly onStep?: ((step: MergeStep) => void) | undefined
  },
): Promise<RestoreOutcome> {
  const target = await context.snapshots.log.find(snapshot)
  const later = (await context.snapshots.log.list())
    .filter((record) => record.id > target.id)
    .reverse()
  const main = await context.snapshotMain()
  const reading = context.snapshots.readRefs()
  const plan = await planRestore({
    gitDir: context.history.gitDir,
    log: context.snapshots.log,
    target,
    later,
    now: {
      files: main.tree,
      skipped: main.skipped,
      owner: context.snapshots.owner,
      ...(reading.type === 'recorded' ? { refs: reading.refs } : { refsNote: reading.reason }),
    },
    ...(options.paths === undefined || options.paths.length === 0 ? {} : { paths: options.paths }),
  })
  const id = target.id
  if (
    options.force !== true &&
    (plan.changedByPerson.length > 0 || plan.refsChangedByPerson.length > 0)
  )
    return {
      type: 'changed-since' as const,
      snapshot: id,
      paths: plan.changedByPerson,
      refs: plan.refsChangedByPerson,
    }
  if (plan.changes.length === 0 && plan.refMoves.length === 0)
    return { type: 'nothing' as const, snapshot: id, tooLarge: plan.tooLarge }
  const entries = plan.changes.map((change) => journalEntryOf(change))
  // What a snapshot held may be what main's policy refuses now (a folder the configuration
  // has since named as its hooks path): a restore is a door like any other.
  const refused = await context.guard(MAIN_LINE, entries)
  if (refused.length > 0) return { type: 'protected' as const, snapshot: id, refused }
  options.onStep?.('planned')
  const changed = await changedSince(context.main, entries)
  if (changed.length > 0) return { type: 'changed-on-disk' as const, snapshot: id, paths: changed }
  const failed = await runJournal(
    context.journal(),
    {
      id: randomBytes(6).toString('hex'),
      kind: 'restore',
      snapshot: id,
      commit: '',
      previous: main.commit,
      entries,
      refs: plan.refMoves,
    },
    options.onStep,
  )
  return {
    type: 'restored' as const,
    snapshot: id,
    paths: entries.map((entry) => entry.path),
    refs: plan.refMoves.filter((move) => !failed.some((failure) => failure.name === move.name)),
    refsFailed: failed,
    refsKept: plan.refsKept,
    ...(plan.refsNote === undefined ? {} : { refsNote: plan.refsNote }),
    tooLarge: plan.tooLarge,
  }
}
