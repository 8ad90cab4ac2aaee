/**
 * @module workspace/git/git-path
 * Paths as git reads and writes them: bytes. A name need not be UTF-8 (git and the file system
 * take any byte but `/` and NUL), and a path that goes to git and back must stay exactly the
 * same (a pathspec or an index entry that misses by one byte leaves a nested repository in).
 * A {@link GitPath} holds one character per byte (latin1), so it round-trips exactly.
 */

/** A workspace-relative path as git's bytes, one character per byte. */
export type GitPath = string & { readonly gitPathBrand: unique symbol }

/** The git path of a UTF-8 path (as a watcher or a person names it). */
export function gitPathOf(text: string): GitPath {
  return Buffer.from(text, 'utf8').toString('latin1') as GitPath
}

/** A git path for people: its bytes read as UTF-8 (a byte that is none shows as U+FFFD). */
export function readablePath(gitPath: GitPath): string {
  return Buffer.from(gitPath, 'latin1').toString('utf8')
}

/** Text holding git paths (pathspecs, a NUL-separated list) as the bytes git reads. */
export function gitBytes(text: string): Buffer {
  return Buffer.from(text, 'latin1')
}

/** The git paths in git's `-z` output. */
export function splitGitPaths(output: Buffer): GitPath[] {
  return output
    .toString('latin1')
    .split('\0')
    .filter((entry) => entry !== '') as GitPath[]
}

/** Where a git path lies under `root`, for the file system. */
export function hostPathOf(root: string, gitPath: GitPath): Buffer {
  return gitPath === '.'
    ? Buffer.from(root)
    : Buffer.concat([Buffer.from(`${root}/`), gitBytes(gitPath)])
}
