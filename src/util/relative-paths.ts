/**
 * @module util/relative-paths
 * Containment of `/`-separated paths, compared by whole components (`a/bc` is not within
 * `a/b`), never by resolving anything.
 */

/**
 * True when `candidate` is `folder` or lies below it. The empty folder is the root, which
 * holds every relative path.
 *
 * @example
 * isWithin('src/a.ts', 'src') // true
 * isWithin('srcx/a.ts', 'src') // false
 */
export function isWithin(candidate: string, folder: string): boolean {
  return folder === '' || candidate === folder || candidate.startsWith(`${folder}/`)
}

/** True when `candidate` is within any of `folders`. */
export function isWithinAny(candidate: string, folders: Iterable<string>): boolean {
  for (const folder of folders) if (isWithin(candidate, folder)) return true
  return false
}
