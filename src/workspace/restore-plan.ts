/**
 * @module workspace/restore-plan
 * What restoring a snapshot would change: the files (or only the given paths) that differ
 * between main now and the snapshot, and the user's git references it recorded. And what it
 * must not change without being told to: whatever a person changed since the snapshot. Between
 * two snapshots, changes are an eitri call's when a call was running in the same process all
 * along (the snapshot before a call to the one after it); every other change is a person's.
 */
import path from 'node:path'
import { EitriError } from '../errors/eitri-error.ts'
import { diffTrees, type TreeChange } from './tree-merge.ts'
import type { SnapshotContents, SnapshotLog } from './snapshot-log.ts'
import type { SnapshotRecord } from './snapshot-record.ts'
import { changedRefs, refMoves, type GitRefs, type RefMove } from './user-git-refs.ts'

/** Main as it is now, for a restore. */
export interface MainNow {
  readonly files: string
  readonly refs?: GitRefs
  /** Why the references cannot be read now, when they cannot. */
  readonly refsNote?: string
  readonly skipped: readonly string[]
  /** The process restoring (snapshot-record's `owner`). */
  readonly owner: string
}

/** What a restore would do. */
export interface RestorePlan {
  /** Each path that differs, from main now (`before`) to the snapshot (`after`). */
  readonly changes: readonly TreeChange[]
  /** The paths among `changes` a person changed since the snapshot. */
  readonly changedByPerson: readonly string[]
  /**
   * Paths left alone because they were (or are) left out of snapshots: over the size bound,
   * inside a nested repository, or refused by git.
   */
  readonly tooLarge: readonly string[]
  /** The references to move back (only when the whole snapshot is restored). */
  readonly refMoves: readonly RefMove[]
  /** The references among `refMoves` a person moved since the snapshot. */
  readonly refsChangedByPerson: readonly string[]
  /** References made since the snapshot: kept, never deleted. */
  readonly refsKept: readonly string[]
  /** Why references are not restored, when they are not. */
  readonly refsNote?: string
}

/**
 * Plans restoring `target`. `later` are the snapshots taken after it, oldest first; `paths`
 * limits the restore to those files and folders (the references then stay as they are).
 */
export async function planRestore(options: {
  readonly gitDir: string
  readonly log: SnapshotLog
  readonly target: SnapshotRecord
  readonly later: readonly SnapshotRecord[]
  readonly now: MainNow
  readonly paths?: readonly string[]
}): Promise<RestorePlan> {
  const { gitDir, log, target, now, paths } = options
  const contents = new Map<number, Promise<SnapshotContents>>()
  const contentsOf = (record: SnapshotRecord): Promise<SnapshotContents> => {
    const known = contents.get(record.id) ?? log.contents(record)
    contents.set(record.id, known)
    return known
  }
  const recorded = await contentsOf(target)
  const selected = (file: string): boolean =>
    paths === undefined ||
    paths.some((wanted) => wanted === '.' || file === wanted || file.startsWith(`${wanted}/`))
  const large = new Set([...recorded.skipped, ...now.skipped])
  // A nested repository is listed as `folder/`; older snapshots recorded one as a gitlink.
  const repositories = [...large].filter((entry) => entry.endsWith('/'))
  const leftAlone = (change: TreeChange): boolean =>
    large.has(change.path) ||
    repositories.some((folder) => `${change.path}/`.startsWith(folder)) ||
    change.before?.kind === 'gitlink' ||
    change.after?.kind === 'gitlink'
  const differing = (await diffTrees(gitDir, now.files, recorded.files)).filter((change) =>
    selected(change.path),
  )
  const changes = differing.filter((change) => !leftAlone(change))
  const wholeRestore = paths === undefined
  const moves =
    wholeRestore && recorded.refs !== undefined && now.refs !== undefined
      ? refMoves(recorded.refs, now.refs)
      : []

  // What a person changed since the snapshot: the changes between snapshots no call covered.
  const byPerson = new Set<string>()
  const refsByPerson = new Set<string>()
  if (changes.length > 0 || moves.length > 0) {
    const points: (SnapshotRecord | undefined)[] = [target, ...options.later, undefined]
    for (let index = 0; index + 1 < points.length; index++) {
      const from = points[index] as SnapshotRecord
      const to = points[index + 1]
      if (from.inFlight > 0 && from.owner === (to?.owner ?? now.owner)) continue
      const before = await contentsOf(from)
      const after = to === undefined ? now : await contentsOf(to)
      if (before.files !== after.files)
        for (const change of await diffTrees(gitDir, before.files, after.files))
          byPerson.add(change.path)
      if (before.refs !== undefined && after.refs !== undefined)
        for (const name of changedRefs(before.refs, after.refs)) refsByPerson.add(name)
    }
  }
  const refsNote = !wholeRestore
    ? 'only the named paths are restored; git references stay as they are'
    : recorded.refs === undefined
      ? `the snapshot recorded no git references (${target.refsNote ?? 'none'})`
      : now.refs === undefined
        ? `the git references cannot be read now (${now.refsNote ?? 'unknown'})`
        : undefined
  return {
    changes,
    changedByPerson: changes.map((change) => change.path).filter((file) => byPerson.has(file)),
    tooLarge: differing.filter(leftAlone).map((change) => change.path),
    refMoves: moves,
    refsChangedByPerson: moves.map((move) => move.name).filter((name) => refsByPerson.has(name)),
    refsKept:
      wholeRestore && recorded.refs !== undefined && now.refs !== undefined
        ? [...now.refs.keys()].filter((name) => !recorded.refs?.has(name)).sort()
        : [],
    ...(refsNote === undefined ? {} : { refsNote }),
  }
}

/** A path a restore may name: workspace-relative, without `..`. */
export function checkRestorePath(raw: string): string {
  const trimmed = raw
    .trim()
    .replace(/^\.\/+/, '')
    .replace(/\/+$/, '')
  const normal = trimmed === '' ? '.' : path.posix.normalize(trimmed)
  if (path.posix.isAbsolute(normal) || normal === '..' || normal.startsWith('../'))
    throw new EitriError(
      'invalid_input',
      `paths: ${JSON.stringify(raw)} is not a workspace-relative path; name files or folders inside the workspace, such as src or src/a.ts.`,
    )
  return normal
}
