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
  // No name git writes below `objects`, `refs` or `logs` starts with a dot (a ref name's parts
  // may not), and a `.git` there is another repository: git run in `.git/refs/x` takes
  // `.git/refs/x/.git` for its repository, with its own configuration and hooks.
  if (rest.some((component) => component === '' || component.startsWith('.'))) return undefined
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

/**
 * What a file below a repository folder's `objects/` is to git:
 * - `loose`: `objects/xx/…`, found by its id alone (checked: its content must hash to its name);
 * - `pack`, `pack-index`: a pack and its index, used together (checked with git);
 * - `pack-keep`: a marker that keeps a pack through repacks;
 * - `pack-list`: `objects/info/packs`, the list dumb HTTP clients read;
 * - `derived`: files git derives from the objects and then trusts about history (commit graphs,
 *   multi-pack indexes, bitmaps, reverse indexes, cruft-pack times) and their lock files: a
 *   forged commit graph with parents removed makes git believe old commits unreachable. They
 *   never come back from the jail; git rebuilds them.
 * Undefined for names git does not leave there (temporary files, `.promisor`, anything else).
 */
export type ObjectFileKind = 'loose' | 'pack' | 'pack-index' | 'pack-keep' | 'pack-list' | 'derived'

/**
 * The kind of the file at `inner` (a path inside a repository folder, below `objects/`).
 *
 * @example
 * objectFileKind('objects/info/commit-graph') // 'derived'
 */
export function objectFileKind(inner: string): ObjectFileKind | undefined {
  if (!inner.startsWith('objects/')) return undefined
  if (inner.endsWith('.lock')) return 'derived'
  if (/^objects\/[0-9a-f]{2}\/(?:[0-9a-f]{38}|[0-9a-f]{62})$/.test(inner)) return 'loose'
  if (inner === 'objects/info/packs') return 'pack-list'
  if (inner === 'objects/info/commit-graph' || inner.startsWith('objects/info/commit-graphs/'))
    return 'derived'
  const pack = /^objects\/pack\/([^/]+)$/.exec(inner)?.[1]
  if (pack === undefined) return undefined
  if (pack.startsWith('multi-pack-index')) return 'derived'
  if (/\.(?:bitmap|rev|mtimes)$/.test(pack)) return 'derived'
  if (pack.endsWith('.pack')) return 'pack'
  if (pack.endsWith('.idx')) return 'pack-index'
  if (pack.endsWith('.keep')) return 'pack-keep'
  return undefined
}
