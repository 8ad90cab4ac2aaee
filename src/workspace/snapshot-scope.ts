/**
 * @module workspace/snapshot-scope
 * Where a snapshot of main looks, from the paths a watcher saw change: the nearest real folder
 * of each, never a path inside the user's `.git`, inside a nested repository eitri leaves out,
 * or through a symbolic link (git refuses a pathspec inside a repository it records or beyond
 * a link, and one such path would stop every snapshot).
 */
import fs from 'node:fs'
import path from 'node:path'
import { gitPathOf, hostPathOf, type GitPath } from './git/git-path.ts'
import type { LeftOutPaths } from './left-out-paths.ts'

/** What a snapshot must look at. */
export interface SnapshotScope {
  /** The folders for git to look at, none inside another; `['.']` for everything. */
  readonly folders: readonly GitPath[]
  /**
   * The changed paths, when each may be judged alone (undefined when a nested repository's
   * `.git` changed: git must judge the folder again).
   */
  readonly files?: readonly GitPath[]
}

const WHOLE = '.' as GitPath

/**
 * The scope of a snapshot after `paths` (workspace-relative, as a watcher names them) changed
 * in the folder at `root`. `leftOut` knows the nested repositories left out; one whose `.git`
 * went away is taken back from it.
 */
export function snapshotScope(
  root: string,
  paths: readonly string[],
  leftOut: LeftOutPaths,
): SnapshotScope {
  const folders = new Set<GitPath>()
  const files: GitPath[] = []
  let alone = true
  const exists = (relative: GitPath): boolean => lstatOf(root, relative) !== undefined
  const directories = new Map<GitPath, boolean>()
  const isRealDirectory = (relative: GitPath): boolean => {
    let known = directories.get(relative)
    if (known === undefined) {
      known = lstatOf(root, relative)?.isDirectory() === true
      directories.set(relative, known)
    }
    return known
  }
  for (const raw of paths) {
    const changed = gitPathOf(raw.replace(/\/+$/, ''))
    const parts = changed.split('/')
    // The user's own repository: its references are read apart, and git never stores it.
    if (parts[0] === '.git') continue
    if (changed === '' || changed === WHOLE) {
      folders.add(WHOLE)
      continue
    }
    const marker = parts.indexOf('.git')
    const holder = marker > 0 ? (parts.slice(0, marker).join('/') as GitPath) : undefined
    const repository = leftOut.repositoryOf(holder ?? changed)
    if (repository !== undefined) {
      // Inside a repository left out, which still is one: nothing of it is snapshotted.
      if (exists(`${repository}/.git` as GitPath)) continue
      // Its .git went away: its files are main's now.
      leftOut.remove(repository)
      folders.add(repository)
      alone = false
    } else if (holder !== undefined) {
      // A .git inside the workspace changed: git judges its folder again.
      folders.add(holder)
      alone = false
    } else {
      folders.add(path.posix.dirname(changed) as GitPath)
      files.push(changed)
    }
  }
  const real = [...folders].map((folder) => nearestRealFolder(folder, isRealDirectory))
  if (real.includes(WHOLE)) return { folders: [WHOLE] }
  const sorted = [...new Set(real)].sort()
  return {
    folders: sorted.filter(
      (folder) => !sorted.some((other) => other !== folder && folder.startsWith(`${other}/`)),
    ),
    ...(alone ? { files } : {}),
  }
}

/** The longest prefix of `folder` whose every part is a real folder (no link on the way). */
function nearestRealFolder(
  folder: GitPath,
  isRealDirectory: (relative: GitPath) => boolean,
): GitPath {
  const parts = folder === WHOLE ? [] : folder.split('/')
  let nearest = WHOLE
  for (let count = 1; count <= parts.length; count++) {
    const prefix = parts.slice(0, count).join('/') as GitPath
    if (!isRealDirectory(prefix)) break
    nearest = prefix
  }
  return nearest
}

function lstatOf(root: string, relative: GitPath): fs.Stats | undefined {
  try {
    return fs.lstatSync(hostPathOf(root, relative))
  } catch {
    return undefined
  }
}
