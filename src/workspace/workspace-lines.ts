/**
 * @module workspace/workspace-lines
 * The lines of work of one workspace: `main` (the user's live folder) and its forks. Forking
 * copies nothing; each fork is a line in eitri's history plus what was written since. Merges
 * are three-way; into main they go through a journal, so main is never left half merged.
 */
import fs from 'node:fs'
import fsPromises from 'node:fs/promises'
import path from 'node:path'
import { EitriError } from '../errors/eitri-error.ts'
import type { RestoreOutcome } from '../ports/line-control.ts'
import type { DirectoryTree } from './directory-tree.ts'
import { PERSON_PRINCIPAL, visibleFork, visibleForks, type Principal } from './fork-owner.ts'
import {
  chooseForkName,
  displayName,
  findLine,
  forkFate,
  forkRef,
  forksBelowRefusal,
  newForkId,
  readChildForks,
  readForkById,
  readForks,
  readForksNamed,
  writeForkAsync,
  type ForkInfo,
} from './fork-registry.ts'
import { MAIN_LINE } from '../ports/line-control.ts'
import type { ForkTree } from './fork-tree.ts'
import { forkWriteLog, openForkTree } from './fork-trees.ts'

export { forkRef, type ForkInfo, type Principal, type RestoreOutcome }
export { type LinesOptions, type MainWriteGuard } from './line-types.ts'
import {
  type ConflictReport,
  type LineChange,
  type LineHooks,
  type LinesOptions,
  type MainWriteGuard,
  type MergeOutcome,
} from './line-types.ts'
import {
  changeCount,
  forkOverviews,
  pruneForks,
  type ForkOverview,
  type ForkOverviewContext,
} from './fork-overview.ts'
import { runGit } from './git/run-git.ts'
import { mainWritesOf } from './main-writes.ts'
import { MAIN_REF, WorkspaceHistory } from './history.ts'
import { recoverJournal, type JournalContext } from './journal-runner.ts'
import {
  conflictReports,
  mergeFork,
  undoMerge,
  type MergeContext,
  type MergeOptions,
  type UndoOutcome,
} from './line-merge.ts'
import { MainLineState } from './main-line-state.ts'
import { MainWatcher } from './main-watcher.ts'
import { ignoredPathsOf } from './ignored-paths.ts'
import { MainSnapshots, type SnapshotRetention } from './main-snapshots.ts'
import type { JournalEntry, MergeStep } from './merge-journal.ts'
import { checkRestorePath } from './restore-plan.ts'
import { restoreMain } from './main-restore.ts'
import { SnapshotLog } from './snapshot-log.ts'
import { UserGitRefs } from './user-git-refs.ts'
import { diffTrees, mergeCommits, unifiedDiffs, type TreeChange } from './tree-merge.ts'
import type { WorkspaceTree } from './workspace-tree.ts'
import { isWithinAny } from '../util/relative-paths.ts'
import { SerialQueue } from '../util/serial-queue.ts'

/**
 * How far `find` walks up a fork's parents by id before it lists every fork instead (a walk
 * that ends without an answer is decided by the listing, so this bounds work, not the answer).
 */
const MAX_FORK_DEPTH_WALK = 64

/** The lines of one workspace. */
export class WorkspaceLines implements AsyncDisposable {
  readonly main: DirectoryTree
  readonly history: WorkspaceHistory
  /** The snapshots of main taken around calls that may change it. */
  readonly snapshots: MainSnapshots
  readonly #stateDir: string
  readonly #hooks: LineHooks
  readonly #guardMain: MainWriteGuard | undefined
  /** Main's tree and snapshots over what the watcher saw change. */
  readonly #mainLine: MainLineState
  /** What the modules of the lines (overview, prune, merge) need from them. */
  readonly #parts: ForkOverviewContext & MergeContext
  readonly #trees = new Map<string, ForkTree>()
  readonly #serial = new SerialQueue()
  /** Forks whose reference is made and record not yet written (their names are taken). */
  readonly #forming = new Map<string, ForkInfo>()
  /** Forks whose discarded record is being written: no door reaches them. */
  readonly #discarding = new Set<string>()

  private constructor(options: LinesOptions, history: WorkspaceHistory) {
    this.main = options.main
    this.history = history
    this.snapshots = new MainSnapshots({
      log: new SnapshotLog(history),
      refs: new UserGitRefs(options.main.root),
      serialize: (work) => this.#serialize(work),
      takeMain: () => this.#mainLine.state(),
    })
    this.#stateDir = options.stateDir
    this.#hooks = options.hooks ?? {}
    this.#guardMain = options.guardMain
    const excluded = options.excluded ?? []
    this.#mainLine = new MainLineState(
      history,
      options.watch === true
        ? new MainWatcher({
            root: options.main.root,
            excluded: (relative) => isWithinAny(relative, excluded),
            ignored: ignoredPathsOf(options.main),
            trackedFolders: () => this.history.trackedFolders(),
          })
        : undefined,
    )
    this.#parts = {
      stateDir: this.#stateDir,
      main: options.main,
      history,
      hooks: this.#hooks,
      excluded,
      serialize: (work) => this.#serialize(work),
      head: (line) => this.#head(line),
      fork: (line) => this.#fork(line),
      forkTree: (info) => this.#forkTree(info),
      forgetTree: (id) => {
        this.#trees.delete(id)
      },
      forkHeld: options.forkHeld ?? (() => false),
      guard: (line, entries) => this.#guard(line, entries),
      journal: () => this.#journal(),
    }
  }

  /** Opens the lines of a workspace, finishing a merge a crash interrupted. */
  static async open(options: LinesOptions): Promise<WorkspaceLines> {
    fs.mkdirSync(path.join(options.stateDir, 'forks'), { recursive: true, mode: 0o700 })
    const history = await WorkspaceHistory.open({
      stateDir: options.stateDir,
      workTree: options.main.root,
      ...(options.excluded === undefined ? {} : { excluded: options.excluded }),
      ...(options.maxFileBytes === undefined ? {} : { maxFileBytes: options.maxFileBytes }),
    })
    const lines = new WorkspaceLines(options, history)
    try {
      await recoverJournal(lines.#journal())
    } catch (error) {
      // A journal that cannot be read back leaves nothing open behind the error.
      await lines.close()
      throw error
    }
    return lines
  }

  /** The forks `principal` may act on (every fork for the person), oldest first. */
  forks(principal: Principal = PERSON_PRINCIPAL): ForkInfo[] {
    return visibleForks(readForks(this.#stateDir), principal)
  }

  /**
   * The line named by id or name, among those `principal` may act on; `main` for main. A fork
   * of another owner is answered exactly like one that does not exist, and a name is looked up
   * only among the principal's own forks, so no name can reach another owner's fork.
   *
   * @throws EitriError `not_found`; `invalid_input` when a name is several forks' (name an id)
   */
  find(idOrName: string, principal: Principal = PERSON_PRINCIPAL): ForkInfo | typeof MAIN_LINE {
    // Main needs no listing (a hire forks its world from main).
    if (idOrName === MAIN_LINE) return MAIN_LINE
    // By id (how Runs and sessions name their forks), one record and its ancestors are read,
    // not every fork's: a listing would answer the same fork, since an id comes before a name.
    const byId = readForkById(this.#stateDir, idOrName)
    if (
      byId !== undefined &&
      visibleFork(byId, principal, (id) => readForkById(this.#stateDir, id), MAX_FORK_DEPTH_WALK)
    ) {
      return byId
    }
    return findLine(this.forks(principal), idOrName)
  }

  /** The files of a line. */
  async tree(line: string): Promise<WorkspaceTree> {
    const found = this.find(line)
    if (found === MAIN_LINE) return this.main
    return this.#forkTree(found)
  }

  /**
   * Why a line no door reaches any more (a fork a person discarded or pruned, here or in another
   * process) is gone, in words; undefined while it is main or an open fork.
   */
  gone(line: string): string | undefined {
    if (line === MAIN_LINE) return undefined
    if (readForkById(this.#stateDir, line) !== undefined && !this.#discarding.has(line))
      return undefined
    const { name, fate } = forkFate(this.#stateDir, line)
    return name === line ? `fork ${line} ${fate}` : `fork ${name} (${line}) ${fate}`
  }

  /** Marks a path of main changed (eitri's own writes to main). */
  touchMain(relativePath: string): void {
    this.#mainLine.touch(relativePath)
  }

  /**
   * Creates a fork of `from` exactly as it is now, for `by`. Copies nothing. `from` is looked
   * up among the lines `by` may act on. The fork is owned by `owner`, by default `by` itself (a
   * Run's world is forked by its parent's session and owned by the Run). A `label` names the
   * fork LABEL-N, N the first number no fork uses (a session's fork, named after its client).
   */
  async fork(
    options: {
      from?: string
      name?: string
      label?: string
      by?: Principal
      owner?: string
      readOnly?: boolean
      quotaBytes?: number
    } = {},
  ): Promise<ForkInfo> {
    const info = await this.#serialize(async () => {
      const by = options.by ?? PERSON_PRINCIPAL
      // No listing unless a label asks for every name in use: `from` by id, a name among the
      // forks so named that `by` sees (a listing costs a stat per open fork, and a hire forks).
      const from = this.find(options.from ?? MAIN_LINE, by)
      if (from !== MAIN_LINE && this.#discarding.has(from.id))
        throw new EitriError(
          'conflict',
          `Fork ${displayName(from)} is being discarded; fork another line.`,
        )
      // A merged fork takes no more work, its store rows included: refused here, before a fork
      // of it is made (was: made, then its store hook failed with the store's words).
      if (from !== MAIN_LINE && from.merged !== undefined)
        throw new EitriError(
          'conflict',
          `Fork ${displayName(from)} was merged into ${from.merged.into} and takes no more work; fork ${from.merged.into} instead (workspace_fork {"from":"${from.merged.into}"}).`,
        )
      const forming = [...this.#forming.values()]
      const named =
        options.name === undefined
          ? []
          : [
              ...readForksNamed(this.#stateDir, options.name),
              ...forming.filter((fork) => fork.name === options.name),
            ].filter((fork) =>
              visibleFork(fork, by, (id) => readForkById(this.#stateDir, id), MAX_FORK_DEPTH_WALK),
            )
      const labelled = options.name === undefined && options.label !== undefined
      const name = chooseForkName(
        options,
        named,
        labelled ? [...readForks(this.#stateDir), ...forming] : [],
      )
      const parent = from === MAIN_LINE ? MAIN_LINE : from.id
      const forkPoint = await this.#head(parent)
      const id = newForkId()
      const info: ForkInfo = {
        id,
        ...(name === undefined ? {} : { name }),
        owner: options.owner ?? by.id,
        parent,
        forkPoint,
        created: new Date().toISOString(),
        readOnly: options.readOnly === true,
        quotaBytes: options.quotaBytes ?? 1024 ** 3,
      }
      // Its name taken and its parent kept from now, though nothing of it is written yet.
      this.#forming.set(id, info)
      return info
    })
    try {
      // Outside the queue, so forks made at once sync together: the record makes the fork
      // exist. Its history line has no reference until its first commit of its own: until then
      // its head is its fork point, which its parent's line keeps (main's and a fork's lines
      // only move forward, and a fork with forks of its own is never discarded).
      await writeForkAsync(this.#stateDir, info)
    } finally {
      this.#forming.delete(info.id)
    }
    await this.#hooks.forked?.(info.parent, info.id)
    return info
  }

  /**
   * The open fork `id` and every open fork below it, each before the fork it came from, found
   * through their parents without listing every fork.
   */
  forksBelow(id: string): ForkInfo[] {
    const top = readForkById(this.#stateDir, id)
    if (top === undefined) return []
    // By id, once each: damaged records naming a cycle end the walk.
    const found = new Map([[top.id, top]])
    for (const fork of found.values()) {
      for (const child of readChildForks(this.#stateDir, fork.id))
        if (!found.has(child.id)) found.set(child.id, child)
    }
    // Found parents first, so reversed each fork comes before the one it came from.
    return [...found.values()].reverse()
  }

  /** Snapshots a line: main's live files, or a fork's writes since its last commit. */
  async commit(line: string, message = 'snapshot'): Promise<string> {
    return this.#serialize(() => this.#head(line, message))
  }

  /**
   * Where a fork's files differ from main's files now (`before` main's, `after` the fork's),
   * without a commit: git compares the two trees and skips every subtree they share, so this
   * costs what differs and what main changed since the last look, not the workspace's size.
   * What main's history leaves out (ignored files, `.git`) is never a difference.
   */
  async forkDifferences(fork: string): Promise<TreeChange[]> {
    const info = this.#fork(fork)
    return this.#serialize(async () => {
      const main = (await this.#mainLine.tree()).tree
      const tree = await this.#forkTree(info)
      const forkTree = tree.clean
        ? await this.history.treeOf(
            (await this.history.readRef(forkRef(info.id))) ?? info.forkPoint,
          )
        : await tree.writeTree()
      return main === forkTree ? [] : diffTrees(this.history.gitDir, main, forkTree)
    })
  }

  /**
   * The paths a fork changed since it was forked, without their diffs (what settling a Run
   * needs). A fork whose head is still its fork point changed nothing: git is not asked.
   */
  async changes(fork: string): Promise<{ path: string; status: TreeChange['status'] }[]> {
    const info = this.#fork(fork)
    const head = await this.#serialize(() => this.#head(info.id))
    if (head === info.forkPoint) return []
    const changes = await diffTrees(this.history.gitDir, info.forkPoint, head)
    return changes.map((change) => ({ path: change.path, status: change.status }))
  }

  /** What a fork changed since it was forked: added, modified and deleted files with diffs. */
  async diff(fork: string): Promise<LineChange[]> {
    return (await this.diffAt(fork)).changes
  }

  /**
   * {@link diff}, with the fork's head it was read at: given to {@link merge} as
   * `expectedHead`, the merge is of exactly what was shown.
   */
  async diffAt(fork: string): Promise<{ head: string; changes: LineChange[] }> {
    const info = this.#fork(fork)
    const head = await this.#serialize(() => this.#head(info.id))
    // Still at its fork point: nothing changed, and no git process to start.
    if (head === info.forkPoint) return { head, changes: [] }
    const changes = await diffTrees(this.history.gitDir, info.forkPoint, head)
    if (changes.length === 0) return { head, changes: [] }
    const texts = await unifiedDiffs(this.history.gitDir, info.forkPoint, head)
    const described = changes.map((change) => {
      const text = texts.get(change.path)
      const binary = text !== undefined && /^Binary files /m.test(text)
      return {
        path: change.path,
        status: change.status,
        binary,
        ...(text === undefined || binary ? {} : { diff: text }),
      }
    })
    return { head, changes: described }
  }

  /** How much review a fork needs: nothing changed, changes, or changes that conflict. */
  async review(fork: string): Promise<{
    tier: 'trivial' | 'reviewable' | 'conflict'
    changes: LineChange[]
    conflicts: ConflictReport[]
  }> {
    const changes = await this.diff(fork)
    if (changes.length === 0) return { tier: 'trivial', changes, conflicts: [] }
    const info = this.#fork(fork)
    const result = await this.#serialize(async () =>
      mergeCommits(this.history.gitDir, await this.#head(info.parent), await this.#head(info.id)),
    )
    if (result.type === 'clean') return { tier: 'reviewable', changes, conflicts: [] }
    return {
      tier: 'conflict',
      changes,
      conflicts: await conflictReports(this.history, result.conflicts),
    }
  }

  /**
   * Merges a fork into its parent. Into main, the live files change through the journal, and
   * the merge is refused, with the list, if a file it would write changed on disk meanwhile.
   * Conflicts change nothing. Approval is the caller's business (a person merges into main).
   */
  async merge(fork: string, options: MergeOptions = {}): Promise<MergeOutcome> {
    const info = this.#fork(fork)
    return this.#serialize(() => mergeFork(this.#parts, info, options))
  }

  /** Undoes the last merge into main; refused, with the list, if those files changed since. */
  async undoMerge(options: { onStep?: (step: MergeStep) => void } = {}): Promise<UndoOutcome> {
    return this.#serialize(() => undoMerge(this.#parts, options))
  }

  /** Throws a fork away, with its history line. Refused while it has forks of its own. */
  async discard(fork: string): Promise<void> {
    const info = this.#fork(fork)
    const discarded = await this.#serialize(async () => {
      if (this.#discarding.has(info.id))
        throw new EitriError('conflict', `Fork ${displayName(info)} is being discarded already.`)
      const children = [
        ...readChildForks(this.#stateDir, info.id),
        ...[...this.#forming.values()].filter((candidate) => candidate.parent === info.id),
      ]
      if (children.length > 0) throw forksBelowRefusal(info, children)
      const changes = await changeCount(this.#parts, info)
      // Nothing in this process reaches it from now: not a write, not a fork from it.
      this.#discarding.add(info.id)
      return { ...info, discarded: { at: new Date().toISOString(), changes } }
    })
    try {
      // The record first, durable (outside the queue, so discards at once sync together): a
      // crash after it leaves a discarded fork, never a half-removed one.
      await writeForkAsync(this.#stateDir, discarded)
      // Outside the queue too: no door reaches the fork now and nothing queued before the
      // first step is left for it, so its reference and write log concern no other line; their
      // removals (which wait on the journal while other writers sync) overlap.
      await this.history.deleteRef(forkRef(info.id))
      this.#trees.delete(info.id)
      await fsPromises.rm(forkWriteLog(this.#stateDir, info.id), { force: true })
    } finally {
      this.#discarding.delete(info.id)
    }
    await this.#hooks.discarded?.(info.id)
  }

  /**
   * Every fork `principal` may see, discarded ones included, oldest first, each with its state,
   * how many files it changed and when it was last active. Open forks' writes are committed.
   */
  async overview(principal: Principal = PERSON_PRINCIPAL): Promise<ForkOverview[]> {
    return forkOverviews(this.#parts, principal)
  }

  /**
   * Removes the forks that are done with: merged ones, discarded ones' records, and open ones
   * that changed nothing and were idle for {@link EMPTY_FORK_IDLE_MS}. A fork with open or
   * merged forks of its own stays. Answers the forks removed.
   */
  async pruneForks(now: number = Date.now()): Promise<ForkOverview[]> {
    return pruneForks(this.#parts, now)
  }

  /**
   * Puts main's files (or only `paths`) back as they were at a snapshot, through the journal,
   * in the queue of writers to main; a whole restore also moves the user's git references back
   * (never deleting one made since). Refused, with the list, for what a person changed since the
   * snapshot, unless `force`. Take a snapshot first (`snapshots.around`) to make it undoable.
   *
   * @throws EitriError `not_found` for an unknown snapshot, `invalid_input` for a bad path.
   */
  async restore(
    snapshot: string | number,
    options: {
      paths?: readonly string[]
      force?: boolean
      onStep?: (step: MergeStep) => void
    } = {},
  ): Promise<RestoreOutcome> {
    const paths = options.paths?.map(checkRestorePath)
    return this.#serialize(() =>
      restoreMain(
        {
          ...this.#parts,
          snapshots: this.snapshots,
          snapshotMain: () => this.#mainLine.snapshot('snapshot'),
        },
        snapshot,
        { ...options, ...(paths === undefined ? {} : { paths }) },
      ),
    )
  }

  /**
   * Deletes the snapshots beyond `retention`, then lets git tidy eitri's own history if it is
   * due (`git gc --auto`, which keeps unreferenced objects younger than two weeks: a fork's
   * writes not yet committed are among them). Open forks are committed first, so none of their
   * writes is unreferenced. Answers the snapshot numbers deleted.
   */
  async prune(retention: SnapshotRetention): Promise<number[]> {
    const removed = await this.snapshots.prune(retention)
    for (const fork of this.forks()) if (fork.merged === undefined) await this.commit(fork.id)
    await this.#serialize(() =>
      runGit({ gitDir: this.history.gitDir }, [
        '-c',
        'gc.packRefs=false',
        'gc',
        '--auto',
        '--quiet',
      ]),
    )
    return removed
  }

  /** The commits of a line, newest first. */
  async log(
    line: string = MAIN_LINE,
    limit = 50,
  ): Promise<{ commit: string; message: string; time: string }[]> {
    if (line === MAIN_LINE) return this.history.commits(MAIN_REF, limit)
    const info = this.#fork(line)
    return this.history.commits(
      (await this.history.readRef(forkRef(info.id))) ?? info.forkPoint,
      limit,
    )
  }

  async close(): Promise<void> {
    await this.snapshots.settled()
    await this.#serial.settled()
    this.#mainLine.close()
    this.history.close()
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close()
  }

  /** Main's policy on what a journal would write. */
  async #guard(
    line: string,
    entries: readonly JournalEntry[],
  ): Promise<readonly { path: string; reason: string }[]> {
    if (this.#guardMain === undefined) return []
    return this.#guardMain(line, await mainWritesOf(this.history.store, entries))
  }

  /** What the journal's steps need from the lines. */
  #journal(): JournalContext {
    return {
      stateDir: this.#stateDir,
      main: this.main,
      history: this.history,
      touch: (changed) => this.#mainLine.touch(changed),
      snapshotMain: (message, paths) => this.#mainLine.snapshot(message, { paths }),
      gitTouched: () => this.#mainLine.gitTouched(),
    }
  }

  /** The head commit of a line, snapshotting main or committing a fork's writes first. */
  async #head(line: string, message = 'snapshot'): Promise<string> {
    if (line === MAIN_LINE) return (await this.#mainLine.snapshot(message)).commit
    const info = this.#fork(line)
    const ref = forkRef(info.id)
    const head = (await this.history.readRef(ref)) ?? info.forkPoint
    const tree = await this.#forkTree(info)
    if (tree.clean) return head
    const written = await tree.writeTree()
    if (written === (await this.history.treeOf(head))) {
      tree.rebase(written)
      return head
    }
    // Dated by its newest write, so the fork's last activity is when it was written.
    const commit = this.history.commit(
      written,
      [head],
      message === 'snapshot' ? `writes in ${displayName(info)}` : message,
      tree.newestWrite,
    )
    await this.history.advanceRef(ref, commit, head, info.forkPoint)
    tree.rebase(written)
    return commit
  }

  #fork(line: string): ForkInfo {
    const found = this.find(line)
    if (found === MAIN_LINE)
      throw new EitriError('invalid_input', 'main is not a fork: name a fork.')
    if (this.#discarding.has(found.id))
      throw new EitriError('not_found', `Fork ${displayName(found)} is being discarded.`)
    return found
  }

  async #forkTree(info: ForkInfo): Promise<ForkTree> {
    const cached = this.#trees.get(info.id)
    if (cached !== undefined) return cached
    const tree = await openForkTree(this.history, this.#stateDir, info)
    this.#trees.set(info.id, tree)
    return tree
  }

  #serialize<T>(work: () => Promise<T>): Promise<T> {
    return this.#serial.run(work)
  }
}
