/**
 * @module workspace/history
 * eitri's own history of a workspace: a bare git repository in eitri's state folder (never the
 * user's `.git`), readable with plain git. Main's snapshots form one line of commits; each fork
 * is a reference to its own line.
 */
import { randomBytes } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { encodeCommit, treeOfCommit } from './git/git-objects.ts'
import { ObjectStore } from './git/object-store.ts'
import { gitBytes, gitPathOf, splitGitPaths, type GitPath } from './git/git-path.ts'
import { runGit, type GitTarget } from './git/run-git.ts'
import { gitlinksAdded } from './git/tree-gitlinks.ts'
import { deleteLooseRefAsync, looseRefAbsent, moveLooseRef } from './git/loose-refs.ts'
import {
  changedPaths,
  DEFAULT_MAX_FILE_BYTES,
  LeftOutPaths,
  trackedPaths,
} from './left-out-paths.ts'
import { withMainSnapshotLock } from './main-snapshot-lock.ts'
import { snapshotScope } from './snapshot-scope.ts'
import type { WorkspaceOwner } from './owner-access.ts'

/** The reference of main's snapshots. */
export const MAIN_REF = 'refs/eitri/main'

/** How many times a snapshot of main looks again after something else moved main under it. */
const SNAPSHOT_ATTEMPTS = 5

/**
 * The attributes of every path in eitri's history (`info/attributes` beats the workspace's own
 * `.gitattributes`): a snapshot stores a file's bytes as they are, with no end-of-line
 * conversion, no re-encoding (which also fails outright on bytes that do not fit), no `$Id$`
 * collapsing and no filter. `diff` and `merge` are made unspecified (`!`), not unset: whatever
 * driver the workspace names is ignored, and forks' diffs and merges keep git's defaults (unset
 * would print every diff as binary and make every edit both sides made a conflict).
 */
const STORE_AS_IS = '* -text -eol -crlf -working-tree-encoding -ident -filter !diff !merge\n'

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
  /** Beside the index: its signature and tree as the last look left them, for the next process. */
  readonly #mainIndexTree: string
  readonly #leftOut: LeftOutPaths
  #lastMain: Snapshot | undefined
  /** The tree git's index of main last gave (never a gitlink in it). */
  #lastTree: string | undefined
  /** The index file as this class last left it: another process may write it too. */
  #indexSignature: string | undefined

  private constructor(
    gitDir: string,
    workTree: string,
    maxFileBytes: number,
    owner: WorkspaceOwner | undefined,
  ) {
    this.gitDir = gitDir
    this.#workTree = workTree
    this.#mainIndex = path.join(path.dirname(gitDir), 'main.index')
    this.#mainIndexTree = `${this.#mainIndex}.tree`
    this.#leftOut = new LeftOutPaths(workTree, maxFileBytes, owner)
    this.store = new ObjectStore(gitDir)
  }

  /**
   * Opens (creating if needed) the history of the workspace at `workTree`, kept in
   * `stateDir/history.git`. `excluded` are workspace-relative paths never snapshotted
   * (eitri's own state, if it lies inside). Files over `maxFileBytes` are never snapshotted.
   * Whatever the workspace's attributes say, a snapshot stores bytes as they are. With `owner`
   * (a root caller's), what that owner may not read is never snapshotted (decision 0060).
   */
  static async open(options: {
    stateDir: string
    workTree: string
    excluded?: readonly string[]
    maxFileBytes?: number
    owner?: WorkspaceOwner | undefined
  }): Promise<WorkspaceHistory> {
    const gitDir = path.join(options.stateDir, 'history.git')
    if (!fs.existsSync(path.join(gitDir, 'HEAD'))) await createHistory(gitDir)
    const history = new WorkspaceHistory(
      gitDir,
      options.workTree,
      options.maxFileBytes ?? DEFAULT_MAX_FILE_BYTES,
      options.owner,
    )
    fs.mkdirSync(path.join(gitDir, 'info'), { recursive: true })
    replaceIfChanged(path.join(gitDir, 'info', 'attributes'), STORE_AS_IS)
    replaceIfChanged(
      path.join(gitDir, 'info', 'exclude'),
      (options.excluded ?? []).map((relative) => `${excludeLine(relative)}\n`).join(''),
    )
    return history
  }

  /** Git settings for commands on main's work tree. */
  get mainTarget(): GitTarget {
    return { gitDir: this.gitDir, workTree: this.#workTree, indexFile: this.#mainIndex }
  }

  /** The commits of a reference, newest first (none when it does not exist). */
  async commits(
    ref: string,
    limit: number,
  ): Promise<{ commit: string; message: string; time: string }[]> {
    if ((await this.readRef(ref)) === undefined) return []
    const output = await runGit({ gitDir: this.gitDir }, [
      'log',
      `--max-count=${limit}`,
      '--format=%H%x00%cI%x00%s',
      ref,
    ])
    return output.stdout
      .toString('utf8')
      .split('\n')
      .filter((line) => line !== '')
      .map((line) => {
        const [commit = '', time = '', message = ''] = line.split('\0')
        return { commit, time, message }
      })
  }

  /** The commit a reference names, or undefined. */
  async readRef(ref: string): Promise<string | undefined> {
    // eitri's references are loose files (nothing here packs them): read one without a process.
    try {
      const loose = fs.readFileSync(path.join(this.gitDir, ref), 'utf8').trim()
      if (/^[0-9a-f]{40}$/.test(loose)) return loose
    } catch {
      // not loose: ask git, unless it is surely nowhere (a fork's before its first commit)
      if (looseRefAbsent(this.gitDir, ref)) return undefined
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
    // git's own lock protocol, without a process; git does what that cannot (and refuses).
    if (moveLooseRef(this.gitDir, ref, commit, expected)) return
    await runGit({ gitDir: this.gitDir }, ['update-ref', ref, commit, expected ?? ''])
  }

  /**
   * Moves a line's reference from `head` to `commit`, where a reference not made yet stands at
   * `base` (a fork's is made at its first commit of its own: until then its head is the commit
   * it was forked from). Refused, as a moved reference is, when it names neither.
   */
  async advanceRef(ref: string, commit: string, head: string, base: string): Promise<void> {
    const unmade = head === base && (await this.readRef(ref)) === undefined
    await this.updateRef(ref, commit, unmade ? undefined : head)
  }

  /** Deletes `ref`, its file operations on the thread pool (nothing to do if it is not there). */
  async deleteRef(ref: string): Promise<void> {
    if (await deleteLooseRefAsync(this.gitDir, ref)) return
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
   * tree changed. What is left out (files over the size bound, nested repositories, paths git
   * refuses) is listed in `skipped`. Processes on one state take their snapshots one at a time
   * (main-snapshot-lock.ts); when main moved under the look all the same (a merge's move in
   * another process), the snapshot is taken again on top of it.
   */
  async snapshotMain(
    options: { paths?: readonly string[]; message?: string } = {},
  ): Promise<Snapshot & { readonly skipped: readonly string[] }> {
    // A watcher that saw nothing change: main is its last snapshot, and git need not look.
    if (
      options.paths?.length === 0 &&
      this.#lastMain !== undefined &&
      this.#lastMain.commit === (await this.readRef(MAIN_REF)) &&
      this.#lastMain.tree === this.#lastTree &&
      this.#indexAsLeft()
    ) {
      return { ...this.#lastMain, skipped: this.#leftOut.list() }
    }
    return withMainSnapshotLock(this.gitDir, async () => {
      for (let attempt = 1; ; attempt++) {
        const previous = await this.readRef(MAIN_REF)
        const snapshot = await this.#snapshotOn(previous, options)
        if (snapshot.commit === previous) return snapshot
        try {
          await this.updateRef(MAIN_REF, snapshot.commit, previous)
          this.#lastMain = { commit: snapshot.commit, tree: snapshot.tree }
          return snapshot
        } catch (error) {
          // Main moved meanwhile: look again on top of where it is now, a few times at most.
          if (attempt >= SNAPSHOT_ATTEMPTS || (await this.readRef(MAIN_REF)) === previous)
            throw error
        }
      }
    })
  }

  /** Main as it is now on top of `previous`: that commit if the tree is its, else a new one. */
  async #snapshotOn(
    previous: string | undefined,
    options: { paths?: readonly string[]; message?: string },
  ): Promise<Snapshot & { readonly skipped: readonly string[] }> {
    const { tree, skipped } = await this.#mainTree(
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
    return { commit, tree, skipped }
  }

  /**
   * Main's tree as it is now, without a commit: git's index of main takes what changed (in the
   * folders of `paths` when a watcher knows them; nothing at all when it saw nothing change).
   * Left out, and listed in `skipped`: files over the size bound, nested repositories (a
   * repository's `folder/`) and paths git refuses to store. A process's first look is a whole
   * one; a look with `paths` that fails is tried once more over the whole folder, and a
   * failure leaves the next look a whole one.
   *
   * Takes main's snapshot lock, as a snapshot does (git writes main's index).
   *
   * @throws EitriError `tool_failed` when git fails for the whole folder (its message names why).
   */
  async mainTree(
    options: { paths?: readonly string[] } = {},
  ): Promise<{ readonly tree: string; readonly skipped: readonly string[] }> {
    if (options.paths?.length === 0 && this.#lastTree !== undefined && this.#indexAsLeft())
      return { tree: this.#lastTree, skipped: this.#leftOut.list() }
    return withMainSnapshotLock(this.gitDir, () => this.#mainTree(options))
  }

  /** What {@link mainTree} does, inside main's snapshot lock. */
  async #mainTree(options: {
    paths?: readonly string[]
  }): Promise<{ readonly tree: string; readonly skipped: readonly string[] }> {
    if (options.paths?.length === 0 && this.#lastTree !== undefined && this.#indexAsLeft())
      return { tree: this.#lastTree, skipped: this.#leftOut.list() }
    try {
      return await this.#look(options.paths)
    } catch (error) {
      this.#forget()
      if (options.paths === undefined) throw error
    }
    try {
      return await this.#look(undefined)
    } catch (error) {
      this.#forget()
      throw error
    }
  }

  /**
   * Whether main's index is as this process's last look left it. When another process on the
   * state looked since, the index holds what it saw (newer than this process's last tree, even
   * when this process's watcher has not seen it yet), so a look that would change nothing
   * still takes the index's tree.
   */
  #indexAsLeft(): boolean {
    return indexSignature(this.#mainIndex) === this.#indexSignature
  }

  async #look(
    paths: readonly string[] | undefined,
  ): Promise<{ readonly tree: string; readonly skipped: readonly string[] }> {
    const target = this.mainTarget
    // The tree the index holds now, free of gitlinks: git add spawns a git inside every
    // repository the index records (to ask whether it is dirty), and that git runs whatever the
    // nested repository's own configuration names. An index another process wrote (or a crash
    // left) is cleaned first; one exactly as a look left it (in this process or an earlier one)
    // holds no gitlink.
    const signature = indexSignature(this.#mainIndex)
    const base =
      this.#lastTree !== undefined && signature === this.#indexSignature
        ? this.#lastTree
        : (this.#savedTree(signature) ?? (await this.#cleanIndex()))
    // The first look of a process (or the one after a failure) is a whole one: the folder may
    // have changed while no one watched.
    const scope =
      paths === undefined || this.#lastTree === undefined
        ? { folders: ['.' as GitPath] }
        : snapshotScope(this.#workTree, paths, this.#leftOut)
    if (scope.folders.length === 0) return this.#finish(base)
    const folders = scope.folders
    const listed = await this.#leftOut.update({
      target,
      folders,
      ...(scope.files === undefined ? {} : { files: scope.files }),
      ...(paths === undefined || this.#lastTree === undefined
        ? {}
        : {
            named: paths
              .map((named) => gitPathOf(named.replace(/\/+$/, '')))
              .filter((named) => named !== '' && named !== '.'),
          }),
    })
    // Nothing new, modified or deleted in the folders: the index already holds them, so its
    // tree is the one it had (two git processes fewer on a workspace that did not change).
    if (listed.unchanged) return this.#finish(base)
    await this.#forceRemove(listed.leftOut)
    // Folders, not files: a pathspec that names a file gone again would stop git. Whatever is
    // left out stays out: git never enters a nested repository named here.
    const pathspecs = [
      ...folders.map((folder) => `:(literal)${folder}`),
      ...this.#leftOut.excludes(),
    ]
    const added = await runGit(
      target,
      ['add', '--all', '--ignore-errors', '--pathspec-from-file=-', '--pathspec-file-nul'],
      {
        input: gitBytes(pathspecs.map((pathspec) => `${pathspec}\0`).join('')),
        allowStatus: [0, 1],
      },
    )
    if (added.status !== 0) {
      // git added all it could: what it still sees as new or modified it could not store (a
      // path it refuses, a nested repository with no commit, a file it cannot read).
      const failed: GitPath[] = []
      for (const listed of await changedPaths(target, folders)) {
        if (this.#leftOut.covers(listed)) continue
        const repository = listed.endsWith('/')
        const relative = (repository ? listed.slice(0, -1) : listed) as GitPath
        this.#leftOut.add(relative, repository ? 'repository' : 'unstorable')
        failed.push(relative)
      }
      await this.#forceRemove(failed)
    }
    let tree = await this.#writeTree()
    // A repository git met before eitri knew it (one made valid between two looks) is taken
    // out again at once, before any later git add could enter it.
    const gitlinks = await gitlinksAdded(this.store, base, tree)
    if (gitlinks.length > 0) {
      for (const gitlink of gitlinks) this.#leftOut.add(gitlink, 'repository')
      await this.#forceRemove(gitlinks)
      tree = await this.#writeTree()
    }
    return this.#finish(tree)
  }

  #finish(tree: string): { readonly tree: string; readonly skipped: readonly string[] } {
    this.#lastTree = tree
    this.#indexSignature = indexSignature(this.#mainIndex)
    this.#saveTree(this.#indexSignature, tree)
    return { tree, skipped: this.#leftOut.list() }
  }

  /** After a failure: the next look is a whole one, and checks the index first. */
  #forget(): void {
    this.#lastTree = undefined
    this.#indexSignature = undefined
    fs.rmSync(this.#mainIndexTree, { force: true })
    this.#leftOut.invalidate()
  }

  /**
   * The tree of the index when it is still exactly as the last look (of any process) left it:
   * a process's first look then skips cleaning it, two git processes fewer. Undefined when the
   * record is missing, torn or names another index.
   */
  #savedTree(signature: string): string | undefined {
    if (signature === 'none') return undefined
    let text: string
    try {
      text = fs.readFileSync(this.#mainIndexTree, 'utf8')
    } catch {
      return undefined
    }
    const saved = /^([0-9.:]+)\n([0-9a-f]{40})\n$/.exec(text)
    return saved !== null && saved[1] === signature ? saved[2] : undefined
  }

  /** Records the index's signature and tree; a record a crash tore is only ignored later. */
  #saveTree(signature: string, tree: string): void {
    if (signature === 'none') return
    const temporary = `${this.#mainIndexTree}.${process.pid}`
    try {
      fs.writeFileSync(temporary, `${signature}\n${tree}\n`, { mode: 0o600 })
      fs.renameSync(temporary, this.#mainIndexTree)
    } catch {
      // Only a saving lost: the next process cleans the index first.
      fs.rmSync(temporary, { force: true })
    }
  }

  /**
   * Whether main's snapshots leave `relative` out (a file over the size bound, one inside a
   * nested repository, one the owner may not read), as of the last snapshot: no tree holds it.
   */
  leavesOut(relative: string): boolean {
    return this.#leftOut.covers(gitPathOf(relative))
  }

  /**
   * The folders main's index holds files in (every folder above each file). Read without the
   * queue: git swaps its index in whole, so a reader sees one version or the other.
   */
  async trackedFolders(): Promise<Set<string>> {
    const output = await runGit(this.mainTarget, ['ls-files', '-z'])
    const folders = new Set<string>()
    for (const file of splitGitPaths(output.stdout)) {
      for (let cut = file.lastIndexOf('/'); cut > 0; cut = file.lastIndexOf('/', cut - 1)) {
        const folder = file.slice(0, cut)
        if (folders.has(folder)) break
        folders.add(folder)
      }
    }
    return folders
  }

  /** Takes every gitlink out of the index and answers the index's tree. */
  async #cleanIndex(): Promise<string> {
    const output = await runGit(this.mainTarget, ['ls-files', '-z', '--stage'])
    const gitlinks = splitGitPaths(output.stdout)
      .filter((line) => line.startsWith('160000 '))
      .map((line) => line.slice(line.indexOf('\t') + 1) as GitPath)
    for (const gitlink of gitlinks) this.#leftOut.add(gitlink, 'repository')
    await this.#forceRemove(gitlinks)
    return this.#writeTree()
  }

  /**
   * Takes paths out of the index: their old content must not pass for their current one. A
   * folder left out whole (one the owner may not read) takes out every file the index holds in it.
   */
  async #forceRemove(leftOut: readonly GitPath[]): Promise<void> {
    const folders = leftOut.filter(
      (relative) =>
        this.#leftOut.isFolder(relative) && this.#leftOut.repositoryOf(relative) === undefined,
    )
    const inside = folders.length === 0 ? [] : await trackedPaths(this.mainTarget, folders)
    const paths = [...leftOut, ...inside]
    if (paths.length === 0) return
    await runGit(this.mainTarget, ['update-index', '--force-remove', '-z', '--stdin'], {
      input: gitBytes(paths.map((file) => `${file}\0`).join('')),
    })
  }

  async #writeTree(): Promise<string> {
    return (await runGit(this.mainTarget, ['write-tree'])).stdout.toString().trim()
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

/** The index file's identity and times, or `none`: changes when any process writes it. */
function indexSignature(file: string): string {
  try {
    const stat = fs.statSync(file)
    return `${stat.ino}:${stat.size}:${stat.mtimeMs}:${stat.ctimeMs}`
  } catch {
    return 'none'
  }
}

/**
 * Makes the history repository whole before it appears at `gitDir`: two processes opening a
 * new state at once (two servers started together) each made it in place, and the second
 * `git init` failed on the first one's files. Each now makes one aside and renames it in; the
 * one that finds the place taken uses what is there. A folder an older eitri left without its
 * `HEAD` is made whole in place, as before.
 */
async function createHistory(gitDir: string): Promise<void> {
  fs.mkdirSync(path.dirname(gitDir), { recursive: true })
  const staged = `${gitDir}.new-${process.pid}-${randomBytes(4).toString('hex')}`
  fs.mkdirSync(staged, { mode: 0o700 })
  try {
    await runGit({ gitDir: staged }, ['init', '--quiet', '--bare'])
    try {
      fs.renameSync(staged, gitDir)
    } catch {
      // taken meanwhile (whole, or an older eitri's folder without HEAD)
      if (!fs.existsSync(path.join(gitDir, 'HEAD'))) {
        await runGit({ gitDir }, ['init', '--quiet', '--bare'])
      }
    }
  } finally {
    fs.rmSync(staged, { recursive: true, force: true })
  }
}

/**
 * Writes `content` to `file` unless it holds it already, by a rename, so git in another
 * process on the same state never reads it half written.
 */
function replaceIfChanged(file: string, content: string): void {
  try {
    if (fs.readFileSync(file, 'utf8') === content) return
  } catch {
    // none yet
  }
  const temporary = `${file}.${process.pid}-${randomBytes(4).toString('hex')}`
  fs.writeFileSync(temporary, content, { mode: 0o600 })
  fs.renameSync(temporary, file)
}
