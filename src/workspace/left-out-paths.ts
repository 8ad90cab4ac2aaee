/**
 * @module workspace/left-out-paths
 * The paths of main a snapshot leaves out, each listed instead: files over a size bound (64 MiB
 * by default, so a snapshot never copies a disk image or a data set on every call),
 * repositories nested in the workspace (submodules, linked worktrees, clones: eitri's git never
 * looks inside one, see history.ts), and paths git refuses to store (`d/.GIT/config`, a
 * `.gitmodules` that is a link, a file it cannot read). For a root caller, what the workspace's
 * owner may not read too (decision 0060): a file, or the topmost folder it may not list or
 * enter, so no fork holds what the jail could not read.
 */
import fs from 'node:fs'
import { gitPathOf, hostPathOf, readablePath, splitGitPaths, type GitPath } from './git/git-path.ts'
import { runGit, type GitTarget } from './git/run-git.ts'
import { isWithin } from '../util/relative-paths.ts'
import { ownerMay, type WorkspaceOwner } from './owner-access.ts'

/** The default size bound of a snapshotted file. */
export const DEFAULT_MAX_FILE_BYTES = 64 * 1024 * 1024

/**
 * Why a path is left out: `unreadable` a file, `unreadable-folder` a folder (and all it holds)
 * the workspace's owner may not read.
 */
export type LeftOutReason =
  'large' | 'repository' | 'unstorable' | 'unreadable' | 'unreadable-folder'

/** The reasons that leave a folder out whole. */
const FOLDER_REASONS: ReadonlySet<LeftOutReason> = new Set(['repository', 'unreadable-folder'])

/** Which paths of main are left out, as of the last update. */
export class LeftOutPaths {
  readonly #root: string
  readonly #maxBytes: number
  /** Whose access a root caller's snapshots take; undefined for any other caller. */
  readonly #owner: WorkspaceOwner | undefined
  readonly #entries = new Map<GitPath, LeftOutReason>()
  /** True once a look at the whole workspace established the set. */
  #complete = false

  constructor(root: string, maxBytes: number, owner?: WorkspaceOwner) {
    this.#root = root
    this.#maxBytes = maxBytes
    this.#owner = owner
  }

  /** The left-out paths for people, sorted; a folder's ends with `/`. */
  list(): string[] {
    return [...this.#entries]
      .map(([relative, reason]) => readablePath(relative) + (FOLDER_REASONS.has(reason) ? '/' : ''))
      .sort()
  }

  /** Whether `relative` is left out as a folder, with all it holds. */
  isFolder(relative: GitPath): boolean {
    const reason = this.#entries.get(relative)
    return reason !== undefined && FOLDER_REASONS.has(reason)
  }

  /** Pathspecs that keep every left-out path out of a `git add`. */
  excludes(): string[] {
    return [...this.#entries.keys()].map((relative) => `:(exclude,literal)${relative}`)
  }

  /** The left-out repository that is `relative` or holds it, if any. */
  repositoryOf(relative: GitPath): GitPath | undefined {
    for (let end = relative.indexOf('/'); end !== -1; end = relative.indexOf('/', end + 1)) {
      const prefix = relative.slice(0, end) as GitPath
      if (this.#entries.get(prefix) === 'repository') return prefix
    }
    return this.#entries.get(relative) === 'repository' ? relative : undefined
  }

  /** Whether a path git listed (a repository as `folder/`) is left out already. */
  covers(listed: GitPath): boolean {
    if (listed.endsWith('/')) return this.isFolder(listed.slice(0, -1) as GitPath)
    if (this.#entries.has(listed)) return true
    for (let end = listed.indexOf('/'); end !== -1; end = listed.indexOf('/', end + 1))
      if (this.isFolder(listed.slice(0, end) as GitPath)) return true
    return false
  }

  /** Leaves `relative` out from now on. */
  add(relative: GitPath, reason: LeftOutReason): void {
    this.#entries.set(relative, reason)
  }

  /** Takes `relative` back (a repository whose `.git` went away). */
  remove(relative: GitPath): void {
    this.#entries.delete(relative)
  }

  /** The next update asks git again (after a snapshot failed, say). */
  invalidate(): void {
    this.#complete = false
  }

  /**
   * Brings the set up to date for `folders`: what git sees as new or modified there (ignored
   * files left out), a nested repository being what git lists as `folder/`. Once the set is
   * complete and a watcher named every changed path (`files`, none of them a folder), those
   * paths alone are judged, without a git process. Answers the paths newly left out, and
   * whether git was asked and saw nothing new or modified in `folders` (then git's index
   * already holds them exactly: adding them again would change nothing).
   */
  async update(options: {
    target: GitTarget
    folders: readonly GitPath[]
    files?: readonly GitPath[]
    /** The paths a watcher named; without them a root caller's look judges every tracked path. */
    named?: readonly GitPath[]
  }): Promise<{ readonly leftOut: GitPath[]; readonly unchanged: boolean }> {
    const before = new Set(this.#entries.keys())
    const files = options.files
    let unchanged = false
    if (files !== undefined && this.#complete && files.every((file) => !this.#isFolder(file))) {
      for (const changed of files) this.#judge(changed)
    } else {
      const whole = options.folders.includes('.' as GitPath)
      for (const known of [...this.#entries.keys()])
        if (
          whole ||
          options.folders.some((folder) => isWithin(known, folder === '.' ? '' : folder))
        )
          this.#entries.delete(known)
      const changed = await changedPaths(options.target, options.folders)
      unchanged = changed.length === 0
      const enterable = new Map<GitPath, boolean>()
      for (const candidate of changed) {
        if (this.#unreadable(candidate, enterable)) continue
        if (candidate.endsWith('/'))
          this.#entries.set(candidate.slice(0, -1) as GitPath, 'repository')
        else if (this.#isLarge(candidate)) this.#entries.set(candidate, 'large')
      }
      // What git does not see as changed may have become unreadable all the same: git compares
      // content, not a mode or an owner, and a folder closed above leaves its files as they were.
      if (this.#owner !== undefined) {
        const judged = options.named ?? (await trackedPaths(options.target, options.folders))
        for (const path of judged) if (!this.covers(path)) this.#unreadable(path, enterable)
        if ([...this.#entries.keys()].some((file) => !before.has(file))) unchanged = false
      }
      if (whole) this.#complete = true
    }
    return {
      leftOut: [...this.#entries.keys()].filter((file) => !before.has(file)),
      unchanged,
    }
  }

  #judge(changed: GitPath): void {
    for (const known of [...this.#entries.keys()])
      if (isWithin(known, changed === '.' ? '' : changed)) this.#entries.delete(known)
    if (this.#unreadable(changed, new Map())) return
    if (this.#isLarge(changed)) this.#entries.set(changed, 'large')
  }

  /**
   * For a root caller: leaves out what of `relative` (a path git listed, a repository as
   * `folder/`) the workspace's owner may not read, the topmost folder on its way that it may
   * not both list and enter, else the file itself, and says whether it did. `enterable` keeps
   * the folders judged during one update.
   */
  #unreadable(relative: GitPath, enterable: Map<GitPath, boolean>): boolean {
    const owner = this.#owner
    if (owner === undefined) return false
    const path = (relative.endsWith('/') ? relative.slice(0, -1) : relative) as GitPath
    for (let end = path.indexOf('/'); end !== -1; end = path.indexOf('/', end + 1)) {
      const folder = path.slice(0, end) as GitPath
      let open = enterable.get(folder)
      if (open === undefined) {
        const stat = this.#lstat(folder)
        open =
          stat === undefined ||
          !stat.isDirectory() ||
          (ownerMay(owner, stat, 'read') && ownerMay(owner, stat, 'search'))
        enterable.set(folder, open)
      }
      if (!open) {
        this.#entries.set(folder, 'unreadable-folder')
        return true
      }
    }
    const stat = this.#lstat(path)
    if (stat === undefined) return false
    const readable = stat.isDirectory()
      ? ownerMay(owner, stat, 'read') && ownerMay(owner, stat, 'search')
      : !stat.isFile() || ownerMay(owner, stat, 'read')
    if (readable) return false
    this.#entries.set(path, stat.isDirectory() ? 'unreadable-folder' : 'unreadable')
    return true
  }

  #lstat(relative: GitPath): fs.Stats | undefined {
    try {
      return fs.lstatSync(hostPathOf(this.#root, relative))
    } catch {
      return undefined
    }
  }

  #isLarge(relative: GitPath): boolean {
    try {
      const stat = fs.lstatSync(hostPathOf(this.#root, relative))
      return stat.isFile() && stat.size > this.#maxBytes
    } catch {
      return false
    }
  }

  #isFolder(relative: GitPath): boolean {
    try {
      return fs.lstatSync(hostPathOf(this.#root, relative)).isDirectory()
    } catch {
      return false
    }
  }
}

/**
 * What main's index holds in `folders` (`.` for all). A folder whose name is not UTF-8 cannot
 * be an argument of git 2.39's ls-files: the whole index is listed and cut to it here.
 */
export async function trackedPaths(
  target: GitTarget,
  folders: readonly GitPath[],
): Promise<GitPath[]> {
  const spellable = folders.every((folder) => gitPathOf(readablePath(folder)) === folder)
  const output = await runGit(target, [
    'ls-files',
    '-z',
    '--',
    ...(spellable ? folders.map((folder) => `:(literal)${readablePath(folder)}`) : ['.']),
  ])
  const tracked = splitGitPaths(output.stdout)
  if (spellable || folders.includes('.' as GitPath)) return tracked
  return tracked.filter((file) => folders.some((folder) => isWithin(file, folder)))
}

/**
 * What git sees as new or modified in `folders`: ignored files left out, a nested repository
 * listed as `folder/` (git never looks inside it for this).
 */
export async function changedPaths(
  target: GitTarget,
  folders: readonly GitPath[],
): Promise<GitPath[]> {
  // git 2.39's ls-files takes pathspecs as arguments only, which are UTF-8: a folder whose name
  // is not (never one a watcher named) is looked at through the whole workspace instead.
  const spelled = folders.map((folder) =>
    gitPathOf(readablePath(folder)) === folder ? readablePath(folder) : '.',
  )
  const output = await runGit(target, [
    'ls-files',
    '-z',
    '--others',
    '--modified',
    '--exclude-standard',
    '--',
    ...spelled.map((folder) => `:(literal)${folder}`),
  ])
  return splitGitPaths(output.stdout)
}
