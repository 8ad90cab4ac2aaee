/**
 * @module access/git-metadata/git-place
 * Where a workspace path stands with respect to a git repository's own folder. Git runs code
 * from much of what a repository folder holds (its configuration, hooks, `commondir`, a
 * worktree's `gitdir`, submodules' folders, alternates, legacy remotes, rebase scripts), and new
 * names appear with new git versions, so protection by a list of bad names cannot be complete.
 * It is turned round here: inside a repository folder only what local git work writes is
 * writable — objects, refs, reflogs, the index, `HEAD` and the usual state files — and
 * everything else is protected.
 */

/** The name of a work tree's repository folder (compared without letter case). */
export const GIT_FOLDER = '.git'

/** What a path is, seen from git. */
export type GitPlace =
  | { readonly type: 'none' }
  /** The `.git` entry itself (a folder, or a file that points git elsewhere). */
  | { readonly type: 'entry'; readonly gitDir: string }
  /** Below a repository folder: `inner` is the path inside it. */
  | { readonly type: 'inside'; readonly gitDir: string; readonly inner: string }

/** The kinds of writable entries inside a repository folder, for the history rules. */
export type GitEntryKind = 'object' | 'ref' | 'reflog' | 'packed-refs' | 'state'

/**
 * Finds the first `.git` component of `relativePath` (any letter case: a case-insensitive file
 * system would honour `.Git`). Names only: it does not look at the disk.
 */
export function gitPlaceByName(relativePath: string): GitPlace {
  const components = relativePath.split('/')
  const index = components.findIndex((component) => component.toLowerCase() === GIT_FOLDER)
  if (index === -1) return { type: 'none' }
  const gitDir = components.slice(0, index + 1).join('/')
  if (index === components.length - 1) return { type: 'entry', gitDir }
  return { type: 'inside', gitDir, inner: components.slice(index + 1).join('/') }
}

/** State files at the top of a repository folder that local git work writes. */
const STATE_FILES = new Set([
  'HEAD',
  'index',
  'COMMIT_EDITMSG',
  'SQUASH_MSG',
  'TAG_EDITMSG',
  'packed-refs',
])

/** Objects that only point elsewhere: git would read (and trust) another object store. */
const FOREIGN_OBJECT_STORES = new Set(['objects/info/alternates', 'objects/info/http-alternates'])

/**
 * The kind of a writable entry at `inner` (a path inside a repository folder), or undefined
 * when git work never needs to write it: then it is protected. Lock files of writable entries
 * are writable (git creates and renames them).
 *
 * @example
 * gitEntryKind('refs/heads/main') // 'ref'
 * gitEntryKind('config') // undefined: protected
 */
export function gitEntryKind(inner: string): GitEntryKind | undefined {
  const path = inner.endsWith('.lock') ? inner.slice(0, -'.lock'.length) : inner
  const [top = '', ...rest] = path.split('/')
  if (rest.some((component) => component === '' || component === '.' || component === '..')) {
    return undefined
  }
  if (top === 'objects') {
    // Any letter case: `objects/info/Alternates` must not slip through on a folding file system.
    return FOREIGN_OBJECT_STORES.has(path.toLowerCase()) ? undefined : 'object'
  }
  if (top === 'refs') return 'ref'
  if (top === 'logs') return 'reflog'
  if (rest.length > 0) return undefined
  if (top === 'packed-refs') return 'packed-refs'
  if (STATE_FILES.has(top)) return 'state'
  // ORIG_HEAD, FETCH_HEAD, MERGE_HEAD, CHERRY_PICK_HEAD, REVERT_HEAD, REBASE_HEAD, BISECT_HEAD…
  if (/^[A-Z][A-Z_]*_HEAD$/.test(top)) return 'state'
  // MERGE_MSG, MERGE_MODE, MERGE_RR, MERGE_AUTOSTASH
  if (/^MERGE_[A-Z_]+$/.test(top)) return 'state'
  return undefined
}
