/**
 * @module workspace/tree-merge
 * Three-way merges and diffs of commits in the history, by git's own plumbing
 * (`merge-tree --write-tree`, `diff-tree`): non-overlapping edits to one file merge line by
 * line; overlapping ones are conflicts, reported with both sides.
 */
import type { TreeEntryKind } from './git/git-objects.ts'
import { kindOfMode } from './git/git-objects.ts'
import { runGit } from './git/run-git.ts'
import { diffHeaderPath } from './git/diff-header-path.ts'

/** One side of a conflicted path: absent when that side deleted it. */
export interface ConflictSide {
  readonly oid: string
  readonly kind: TreeEntryKind
}

/** A path both sides changed in overlapping ways. */
export interface MergeConflict {
  readonly path: string
  /** The merge base's version. */
  readonly base?: ConflictSide
  /** The version of the line merged into. */
  readonly ours?: ConflictSide
  /** The version of the line being merged. */
  readonly theirs?: ConflictSide
}

/** The result of merging two commits. */
export type TreeMergeResult =
  | { readonly type: 'clean'; readonly tree: string }
  | { readonly type: 'conflict'; readonly conflicts: MergeConflict[] }

/** Merges `theirs` into `ours` (commits); the base is their common ancestor. */
export async function mergeCommits(
  gitDir: string,
  ours: string,
  theirs: string,
): Promise<TreeMergeResult> {
  const output = await runGit(
    { gitDir },
    ['merge-tree', '--write-tree', '-z', '--no-messages', ours, theirs],
    { allowStatus: [0, 1] },
  )
  const fields = output.stdout.toString('utf8').split('\0')
  const tree = fields[0] ?? ''
  if (output.status === 0) return { type: 'clean', tree }
  const byPath = new Map<
    string,
    { base?: ConflictSide; ours?: ConflictSide; theirs?: ConflictSide }
  >()
  for (const field of fields.slice(1)) {
    if (field === '') break
    const match = /^(\d+) ([0-9a-f]{40}) ([123])\t(.*)$/s.exec(field)
    if (match === null) continue
    const [, mode = '', oid = '', stage = '', path = ''] = match
    const side = { oid, kind: kindOfMode(mode) }
    const sides = byPath.get(path) ?? {}
    if (stage === '1') sides.base = side
    else if (stage === '2') sides.ours = side
    else sides.theirs = side
    byPath.set(path, sides)
  }
  return { type: 'conflict', conflicts: [...byPath].map(([path, sides]) => ({ path, ...sides })) }
}

/** One path that differs between two trees. */
export interface TreeChange {
  readonly path: string
  readonly status: 'added' | 'modified' | 'deleted'
  readonly before?: ConflictSide
  readonly after?: ConflictSide
}

const ZERO_OID = '0'.repeat(40)

/** The paths that differ between two trees (or commits), folders expanded. */
export async function diffTrees(gitDir: string, from: string, to: string): Promise<TreeChange[]> {
  const output = await runGit({ gitDir }, [
    'diff-tree',
    '-r',
    '-z',
    '--no-renames',
    '--no-commit-id',
    from,
    to,
  ])
  const fields = output.stdout.toString('utf8').split('\0')
  const changes: TreeChange[] = []
  for (let index = 0; index + 1 < fields.length; index += 2) {
    const header = fields[index] ?? ''
    const path = fields[index + 1] ?? ''
    const match = /^:(\d+) (\d+) ([0-9a-f]{40}) ([0-9a-f]{40}) ([AMDT])/.exec(header)
    if (match === null) continue
    const [, oldMode = '', newMode = '', oldOid = '', newOid = '', letter = ''] = match
    const before = oldOid === ZERO_OID ? undefined : { oid: oldOid, kind: kindOfMode(oldMode) }
    const after = newOid === ZERO_OID ? undefined : { oid: newOid, kind: kindOfMode(newMode) }
    const status = letter === 'A' ? 'added' : letter === 'D' ? 'deleted' : 'modified'
    changes.push({
      path,
      status,
      ...(before === undefined ? {} : { before }),
      ...(after === undefined ? {} : { after }),
    })
  }
  return changes
}

/** Unified diffs between two commits, one text per path (binary files named, not printed). */
export async function unifiedDiffs(
  gitDir: string,
  from: string,
  to: string,
): Promise<Map<string, string>> {
  const output = await runGit({ gitDir }, [
    'diff-tree',
    '-r',
    '-p',
    '--no-renames',
    '--no-commit-id',
    '--no-color',
    from,
    to,
  ])
  const texts = new Map<string, string>()
  for (const section of output.stdout.toString('latin1').split(/^(?=diff --git )/m)) {
    const path = diffHeaderPath(section.split('\n', 1)[0] ?? '')
    if (path === undefined) continue
    const text = Buffer.from(section.trimEnd(), 'latin1').toString('utf8')
    texts.set(path, `${text}${emptyFileNote(text)}`)
  }
  return texts
}

/** A new or deleted empty file has no lines to show: git prints its header alone. Say so. */
function emptyFileNote(text: string): string {
  if (/^@@ |^Binary files /m.test(text)) return ''
  if (/^new file mode /m.test(text)) return '\n(new empty file)'
  if (/^deleted file mode /m.test(text)) return '\n(empty file deleted)'
  return ''
}
