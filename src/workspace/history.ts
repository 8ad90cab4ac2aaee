/**
 * @module workspace/history
 * eitri's own history of a workspace: a bare git repository in eitri's state folder (never the
 * user's `.git`), readable with plain git. Main's snapshots form one line of commits; each fork
 * is a reference to its own line.
 */
import fs from 'node:fs'
import path from 'node:path'
import { encodeCommit, treeOfCommit } from './git/git-objects.ts'
import { ObjectStore } from './git/object-store.ts'
import { runGit, type GitTarget } from './git/run-git.ts'
import { DEFAULT_MAX_FILE_BYTES, LargeFiles } from './large-files.ts'

/** The reference of main's snapshots. */
export const MAIN_REF = 'refs/eitri/main'

/** A commit and its tree. */
export interface Snapshot {
  readonly commit: string
  readonly tree: string
}

/** The history repository of one workspace. */
export class WorkspaceHistory {
  readonly gitDir: string
  readonly store: ObjectStore
  readonly #workTree: string
  readonly #mainIndex: string
  readonly #large: LargeFiles
  #lastMain: Snapshot | undefined
  /** The tree git's index of main last gave: the index changes only through this class. */
  #lastTree: string | undefined

  private constructor(gitDir: string, workTree: string, maxFileBytes: number) {
    this.gitDir = gitDir
    this.#workTree = workTree
    this.#mainIndex = path.join(path.dirname(gitDir), 'main.index')
    this.#large = new LargeFiles(workTree, maxFileBytes)
    this.store = new ObjectStore(gitDir)
  }

  /**
   * Opens (creating if needed) the history of the workspace at `workTree`, kept in
   * `stateDir/history.git`. `excluded` are workspace-relative paths never snapshotted
   * (eitri's own state, if it lies inside). Files over `maxFileBytes` are never snapshotted.
   */
  static async open(options: {
    stateDir: string
    workTree: string
    excluded?: readonly string[]
    maxFileBytes?: number
  }): Promise<WorkspaceHistory> {
    const gitDir = path.join(options.stateDir, 'history.git')
    if (!fs.existsSync(path.join(gitDir, 'HEAD'))) {
      fs.mkdirSync(gitDir, { recursive: true, mode: 0o700 })
      await runGit({ gitDir }, ['init', '--quiet', '--bare'])
    }
    const history = new WorkspaceHistory(
      gitDir,
      options.workTree,
      options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES,
    )
    const exclude = path.join(gitDir, 'info', 'exclude')
    fs.mkdirSync(path.dirname(exclude), { recursive: true })
    fs.writeFileSync(
      exclude,
      (options.excluded ?? []).map((relative) => `${excludeLine(relative)}\n`).join(''),
    )
    return history
  }

  /** Git settings for commands on main's work tree. */
  get mainTarget(): GitTarget {
    return { gitDir: this.gitDir, workTree: this.#workTree, indexFile: this.#mainIndex }
  }

  /** The commit a reference names, or undefined. */
  async readRef(ref: string): Promise<string | undefined> {
    // eitri's references are loose files (nothing here packs them): read one without a process.
    try {
      const loose = fs.readFileSync(path.join(this.gitDir, ref), 'utf8').trim()
      if (/^[0-9a-f]{40}$/.test(loose)) return loose
    } catch {
      // not loose: ask git
    }
    const output = await runGit(
      { gitDir: this.gitDir },
      ['rev-parse', '--verify', '--quiet', `${ref}^{commit}`],
      { check: false },
    )
    return output.status === 0 ? output.stdout.toString().trim() : undefined
  }

  /** Points `ref` at `commit`, only if it still names `expected` (undefined: must not exist). */
  async updateRef(ref: string, commit: string, expected?: string): Promise<void> {
    await runGit({ gitDir: this.gitDir }, ['update-ref', ref, commit, expected ?? ''])
  }

  async deleteRef(ref: string): Promise<void> {
    await runGit({ gitDir: this.gitDir }, ['update-ref', '-d', ref], { check: false })
  }

  /** The tree of a commit. */
  async treeOf(commit: string): Promise<string> {
    return treeOfCommit((await this.store.require(commit)).content)
  }

  /** Writes a commit object. */
  commit(tree: string, parents: readonly string[], message: string, time?: Date): string {
    return this.store.write(
      'commit',
      encodeCommit({ tree, parents, message, ...(time === undefined ? {} : { time }) }),
    )
  }

  /**
   * Records main as it is now: git's index of main (its stat cache) takes what changed, or only
   * what lies in the folders of `paths` when a watcher knows them; a new commit only when the
   * tree changed. Files over the size bound stay out (they are listed in `skipped`).
   */
  async snapshotMain(
    options: { paths?: readonly string[]; message?: string } = {},
  ): Promise<Snapshot & { readonly skipped: readonly string[] }> {
    const previous = await this.readRef(MAIN_REF)
    // A watcher that saw nothing change: main is its last snapshot, and git need not look.
    if (
      options.paths?.length === 0 &&
      this.#lastMain !== undefined &&
      this.#lastMain.commit === previous &&
      this.#lastMain.tree === this.#lastTree
    ) {
      return { ...this.#lastMain, skipped: this.#large.paths() }
    }
    const { tree, skipped } = await this.mainTree(
      previous === undefined || options.paths === undefined ? {} : { paths: options.paths },
    )
    if (previous !== undefined && (await this.treeOf(previous)) === tree) {
      this.#lastMain = { commit: previous, tree }
      return { ...this.#lastMain, skipped }
    }
    const commit = this.commit(
      tree,
      previous === undefined ? [] : [previous],
      options.message ?? 'snapshot of main',
    )
    await this.updateRef(MAIN_REF, commit, previous)
    this.#lastMain = { commit, tree }
    return { ...this.#lastMain, skipped }
  }

  /**
   * Main's tree as it is now, without a commit: git's index of main takes what changed (in the
   * folders of `paths` when a watcher knows them; nothing at all when it saw nothing change),
   * files over the size bound left out and listed.
   */
  async mainTree(
    options: { paths?: readonly string[] } = {},
  ): Promise<{ readonly tree: string; readonly skipped: readonly string[] }> {
    if (options.paths?.length === 0 && this.#lastTree !== undefined)
      return { tree: this.#lastTree, skipped: this.#large.paths() }
    const folders =
      options.paths === undefined || !fs.existsSync(this.#mainIndex)
        ? ['.']
        : this.#foldersOf(options.paths)
    const newlyLarge = await this.#large.update({
      target: this.mainTarget,
      folders,
      ...(folders[0] === '.' || options.paths === undefined ? {} : { paths: options.paths }),
    })
    // A file that grew past the bound leaves the index: its old content must not pass for its
    // current one.
    if (newlyLarge.length > 0)
      await runGit(this.mainTarget, ['update-index', '--force-remove', '-z', '--stdin'], {
        input: newlyLarge.map((file) => `${file}\0`).join(''),
      })
    // Folders, not files: a pathspec that names a file gone again would stop git.
    const pathspecs = [
      ...folders.map((folder) => `:(literal)${folder}`),
      ...this.#large.paths().map((file) => `:(exclude,literal)${file}`),
    ]
    await runGit(
      this.mainTarget,
      ['add', '--all', '--pathspec-from-file=-', '--pathspec-file-nul'],
      {
        input: pathspecs.map((pathspec) => `${pathspec}\0`).join(''),
      },
    )
    const tree = (await runGit(this.mainTarget, ['write-tree'])).stdout.toString().trim()
    this.#lastTree = tree
    return { tree, skipped: this.#large.paths() }
  }

  /** The nearest existing folder of each changed path, without nesting. */
  #foldersOf(paths: readonly string[]): string[] {
    const folders = new Set<string>()
    for (const changed of paths) {
      let folder = path.posix.dirname(changed)
      while (folder !== '.' && !fs.existsSync(path.join(this.#workTree, folder)))
        folder = path.posix.dirname(folder)
      folders.add(folder)
    }
    if (folders.has('.')) return ['.']
    const sorted = [...folders].sort()
    return sorted.filter(
      (folder) => !sorted.some((other) => other !== folder && folder.startsWith(`${other}/`)),
    )
  }

  close(): void {
    this.store.close()
  }
}

/**
 * An exclude line naming exactly one path: anchored, and with the characters git would read as
 * a pattern (`*?[\\`, a leading `!` or `#`, trailing spaces) escaped.
 */
function excludeLine(relative: string): string {
  return `/${relative.replace(/[*?[\\!#]/g, '\\$&').replace(/ +$/, (spaces) => spaces.replaceAll(' ', '\\ '))}`
}
