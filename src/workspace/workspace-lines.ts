/**
 * @module workspace/workspace-lines
 * The lines of work of one workspace: `main` (the user's live folder) and its forks. Forking
 * copies nothing; each fork is a line in eitri's history plus what was written since. Merges
 * are three-way; into main they go through a journal, so main is never left half merged.
 */
import fs from 'node:fs'
import path from 'node:path'
import { EitriError } from '../errors/eitri-error.ts'
import type { RestoreOutcome } from '../ports/line-control.ts'
import type { DirectoryTree } from './directory-tree.ts'
import { PERSON_PRINCIPAL, visibleFork, visibleForks, type Principal } from './fork-owner.ts'
import {
  displayName,
  findLine,
  forkFate,
  forkRef,
  readChildForks,
  readForkById,
  readForks,
  type ForkInfo,
} from './fork-registry.ts'
import { MAIN_LINE } from '../ports/line-control.ts'
import type { ForkTree } from './fork-tree.ts'
import { openForkTree } from './fork-trees.ts'

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
import { forkOverviews, pruneForks, type ForkOverview } from './fork-overview.ts'
import { runGit } from './git/run-git.ts'
import { mainWritesOf } from './main-writes.ts'
import { MAIN_REF, WorkspaceHistory } from './history.ts'
import { recoverJournal, type JournalContext } from './journal-runner.ts'
import {
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
import type { TreeChange } from './tree-merge.ts'
import type { WorkspaceTree } from './workspace-tree.ts'
import { isWithinAny } from '../util/relative-paths.ts'
import { SerialQueue } from '../util/serial-queue.ts'
import { reopenUndoneMerge } from './undone-merge.ts'
import {
  makeFork,
  MAX_FORK_DEPTH_WALK,
  type ForkMakingContext,
  type ForkOptions,
} from './line-fork.ts'
import { discardFork, type DiscardContext } from './line-discard.ts'
import {
  forkChanges,
  forkDiffAt,
  forkDifferences,
  forkReview,
  type DiffContext,
} from './line-diffs.ts'

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
  /** What the modules of the lines (fork, diffs, discard, overview, prune, merge) need. */
  readonly #parts: ForkMakingContext & DiscardContext & DiffContext & MergeContext
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
      forming: this.#forming,
      discarding: this.#discarding,
      find: (idOrName, principal) => this.find(idOrName, principal),
      mainTree: async () => (await this.#mainLine.tree()).tree,
    }
  }

  /** Opens the lines of a workspace, finishing a merge a crash interrupted. */
  static async open(options: LinesOptions): Promise<WorkspaceLines> {
    fs.mkdirSync(path.join(options.stateDir, 'forks'), { recursive: true, mode: 0o700 })
    const history = await WorkspaceHistory.open({
      stateDir: options.stateDir,
      workTree: options.main.root,
      owner: options.main.owner,
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
  async fork(options: ForkOptions = {}): Promise<ForkInfo> {
    return makeFork(this.#parts, options)
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
    return forkDifferences(this.#parts, this.#fork(fork))
  }

  /**
   * The paths a fork changed since it was forked, without their diffs (what settling a Run
   * needs). A fork whose head is still its fork point changed nothing: git is not asked.
   */
  async changes(fork: string): Promise<{ path: string; status: TreeChange['status'] }[]> {
    return (await this.changesAt(fork)).changes
  }

  /**
   * {@link changes}, with the fork's head it was read at: given to {@link merge} as
   * `expectedHead`, a settlement merges exactly the paths a person was shown.
   */
  changesAt(fork: string): Promise<{
    head: string
    changes: { path: string; status: TreeChange['status'] }[]
  }> {
    return forkChanges(this.#parts, this.#fork(fork))
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
    return forkDiffAt(this.#parts, this.#fork(fork))
  }

  /** How much review a fork needs: nothing changed, changes, or changes that conflict. */
  async review(fork: string): Promise<{
    tier: 'trivial' | 'reviewable' | 'conflict'
    changes: LineChange[]
    conflicts: ConflictReport[]
  }> {
    return forkReview(this.#parts, this.#fork(fork))
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

  /**
   * Undoes the last merge into main; refused, with the list, if those files changed since. The
   * merged fork stays merged and read-only; what the merge brought goes on in a new open fork
   * of main (`reopened`), which merges again as the first merge did.
   */
  async undoMerge(options: { onStep?: (step: MergeStep) => void } = {}): Promise<UndoOutcome> {
    const undone = await this.#serialize(() => undoMerge(this.#parts, options))
    if (undone.type !== 'undone') return undone
    const record = undone.fork === undefined ? undefined : readForkById(this.#stateDir, undone.fork)
    const merged = record === undefined ? (undone.fork ?? 'a fork') : displayName(record)
    if (undone.entries.length === 0) return { type: 'undone', paths: undone.paths, merged }
    const reopened = await reopenUndoneMerge(
      {
        store: this.history.store,
        fork: (fork) => this.fork(fork),
        tree: (line) => this.tree(line),
        commit: (line, message) => this.commit(line, message),
      },
      undone.entries,
      record,
      merged,
    )
    return { type: 'undone', paths: undone.paths, merged, reopened }
  }

  /** Throws a fork away, with its history line. Refused while it has forks of its own. */
  async discard(fork: string): Promise<void> {
    await discardFork(this.#parts, this.#fork(fork))
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
