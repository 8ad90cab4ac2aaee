/**
 * @module config/private-paths
 * eitri's own state and configuration, by their real paths. A path may be named through a
 * symbolic link (a home folder behind a link) while the workspace is known by its real path,
 * or the other way round; compared as written, the two never match and the state is not
 * hidden. So every private path is resolved once, when a workspace opens, and every door
 * that hides them (the workspace views, the jail's mirror, the history, the watcher) gets the
 * same workspace-relative list.
 */
import fs from 'node:fs'
import path from 'node:path'

/**
 * The real host paths of `hostPaths`. A path that does not exist yet is resolved through its
 * nearest existing folder (the part below it cannot hide a link yet); one that is itself a link
 * is given both as named (the real folder plus its name) and as the target it leads to.
 */
export function realPrivatePaths(hostPaths: readonly string[]): string[] {
  const real = new Set<string>()
  for (const hostPath of hostPaths) {
    const absolute = path.resolve(hostPath)
    real.add(path.join(realFolder(path.dirname(absolute)), path.basename(absolute)))
    try {
      real.add(fs.realpathSync(absolute))
    } catch {
      // It does not exist: the name above is all there is.
    }
  }
  return [...real]
}

/**
 * The workspace-relative paths of those real private paths that lie inside `root` (itself a
 * real path), sorted and without duplicates. A private path that contains the whole workspace
 * is answered as `''`: the caller refuses such a workspace.
 */
export function privatePathsInside(root: string, realPaths: readonly string[]): string[] {
  const inside = new Set<string>()
  for (const hostPath of realPaths) {
    const relative = path.relative(root, hostPath)
    if (isBelow(relative)) inside.add(relative.split(path.sep).join('/'))
    else if (isBelow(path.relative(hostPath, root))) inside.add('')
  }
  return [...inside].sort()
}

/** True for a relative path that stays where it starts or goes down (`''` included). */
function isBelow(relative: string): boolean {
  return relative !== '..' && !relative.startsWith(`..${path.sep}`) && !path.isAbsolute(relative)
}

/** The real path of `folder`, or of its nearest existing ancestor with the rest appended. */
function realFolder(folder: string): string {
  try {
    return fs.realpathSync(folder)
  } catch {
    const parent = path.dirname(folder)
    if (parent === folder) return folder
    return path.join(realFolder(parent), path.basename(folder))
  }
}
