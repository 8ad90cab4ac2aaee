/**
 * @module jail/overlay/kept-layer
 * The bookkeeping of a workspace's kept layer: the lower layer between the workspace and each
 * command's upper layer that holds what commands wrote but that is not written back (a
 * repository made where there was none; in a fork, git's own files and ignored files). It
 * knows which paths the layer holds, how much disk it takes, and what the model was told of;
 * it moves a finished command's kept paths in while there is room (kept-size.ts), and gives way
 * where the workspace has since made an entry of its own. A fork's list and size are also
 * saved with the fork (fork-keep.ts), so a restarted eitri finds them again.
 *
 * Apart from the overlay workspace so that its state has one owner; the mounts stay with the
 * workspace, which hands in the one host call needed here (reading opaque marks).
 */
import path from 'node:path'
import { formatBytes } from '../../access/write-back/plan-write-back.ts'
import type { WorkspaceTree } from '../../workspace/workspace-tree.ts'
import { existsPinned, removePinned } from '../pinned-folder.ts'
import type { SyncReport } from '../write-back.ts'
import { isWithin, isWithinAny } from '../../util/relative-paths.ts'
import type { ForkKeepFolder } from './fork-keep.ts'
import { keepLayer, mergedFolders, onlyIndex, toldAs } from './kept-layer-merge.ts'
import { pruneKeptGit, readBaseConfig } from './kept-git.ts'
import { allocatedBytes, keptGrowth } from './kept-size.ts'

/** One workspace's kept layer; see the module comment. */
export class KeptLayer {
  /** The kept layer's folder, as the host names it. */
  readonly folder: string
  readonly #tree: WorkspaceTree
  readonly #maxBytes: number
  /** `workspace` or `fork`, as the model reads it in a refusal. */
  readonly #what: string
  /** The overlay's opaque mark of each folder (absolute paths), as the layer host reads it. */
  readonly #opaque: (folders: readonly string[]) => Promise<boolean[]>
  /**
   * A fork's folder under eitri's state that keeps the layer across restarts (fork-keep.ts);
   * undefined for main, or with why in {@link #notKept} when it cannot serve.
   */
  readonly #keep: ForkKeepFolder | undefined
  readonly #notKept: string | undefined
  /**
   * Repositories commands made where there was none: never written back, but kept in this
   * layer, so the next command still has them (the command that made one says so, once). In a
   * fork, git's own files and ignored files are kept so too, silently: that is where they
   * belong.
   */
  readonly #kept = new Set<string>()
  /** The layer's disk use, once measured (kept-size.ts). */
  #keptBytes: number | undefined
  /** What a fork kept apart that the model was told of (each once). */
  readonly #told = new Set<string>()

  constructor(options: {
    readonly folder: string
    readonly tree: WorkspaceTree
    readonly maxBytes: number
    readonly forked: boolean
    readonly opaque: (folders: readonly string[]) => Promise<boolean[]>
    readonly keep?: ForkKeepFolder | undefined
    readonly notKept?: string | undefined
  }) {
    this.folder = options.folder
    this.#tree = options.tree
    this.#maxBytes = options.maxBytes
    this.#what = options.forked ? 'fork' : 'workspace'
    this.#opaque = options.opaque
    this.#keep = options.keep
    this.#notKept = options.notKept
    for (const relative of options.keep?.paths() ?? []) this.#kept.add(relative)
  }

  /** Whether the layer holds nothing (then an overlay goes without it). */
  isEmpty(): boolean {
    return this.#kept.size === 0
  }

  /**
   * Moves in what a fork's command left apart (git's files, ignored files), where there is
   * room, telling `report` of each once; `below` says whether the workspace has a path.
   */
  async keepApart(
    upper: string,
    relatives: readonly string[],
    below: (relative: string) => boolean,
    report: SyncReport,
    /** The workspace folder below the kept layer (a repository's configuration there counts). */
    workspace?: string,
  ): Promise<void> {
    const pruned = await this.#pruneGit(upper, relatives, workspace, report)
    const opaque = await this.#opaqueOverKept(upper, relatives)
    const apart = this.#roomToKeep(upper, pruned, below, opaque, report)
    this.#listKept(apart)
    for (const relative of apart) {
      const told = toldAs(relative)
      // git refreshing its index (`git status`) is not worth a word; a commit or a branch is.
      if (!this.#told.has(told) && !onlyIndex(upper, relative)) {
        this.#told.add(told)
        report.kept.push({ path: told, reason: this.#apartReason(told) })
      }
      keepLayer(upper, this.folder, relative, below, opaque)
    }
  }

  /**
   * Moves in the repositories a command made (`made`, as the write-back plan keeps them) where
   * there is room; returns those moved in. What has no room is told in `report`.
   */
  async keepMade<Entry extends { readonly path: string }>(
    upper: string,
    made: readonly Entry[],
    report: SyncReport,
  ): Promise<Entry[]> {
    const present = new Set(
      await this.#pruneGit(
        upper,
        made.map((entry) => entry.path),
        undefined,
        report,
      ),
    )
    const repositories = made.map((entry) => entry.path).filter((relative) => present.has(relative))
    const madeOpaque = await this.#opaqueOverKept(upper, repositories)
    const room = new Set(this.#roomToKeep(upper, repositories, () => false, madeOpaque, report))
    const kept = made.filter((entry) => room.has(entry.path))
    this.#listKept(kept.map((entry) => entry.path))
    for (const { path: relative } of kept) {
      keepLayer(upper, this.folder, relative, () => false, madeOpaque)
    }
    return kept
  }

  /**
   * Takes out of the upper layer what the keep door refuses inside repository folders
   * (kept-git.ts), telling `report`; answers those of `relatives` still there. A config's
   * programs are compared with the one the command saw: the kept layer's, else the workspace's.
   */
  async #pruneGit(
    upper: string,
    relatives: readonly string[],
    workspace: string | undefined,
    report: SyncReport,
  ): Promise<string[]> {
    const base = (relative: string): Buffer | undefined =>
      readBaseConfig(this.folder, relative) ??
      (workspace === undefined ? undefined : readBaseConfig(workspace, relative))
    report.refused.push(...(await pruneKeptGit(upper, relatives, base)))
    return relatives.filter((relative) => existsPinned(upper, relative))
  }

  /**
   * The upper layer's folders below `relatives` that the overlay made anew over a deleted one
   * where the kept layer has a folder too: moved in, they replace it instead of merging.
   */
  async #opaqueOverKept(upper: string, relatives: readonly string[]): Promise<Set<string>> {
    const merging = relatives.flatMap((relative) => mergedFolders(upper, this.folder, relative))
    const flags = await this.#opaque(merging.map((relative) => path.join(upper, relative)))
    return new Set(merging.filter((_, index) => flags[index] === true))
  }

  /**
   * Of what the command left apart (`relatives`), what the kept layer has room for, counted as
   * it will be kept (kept-size.ts). A repository's files go whole or not at all (a ref without
   * its objects would break it), so they are counted together; what has no room is told in
   * `report`, and the kept layer stays as it was there. Shrinking always has room.
   */
  #roomToKeep(
    upper: string,
    relatives: readonly string[],
    below: (relative: string) => boolean,
    opaque: ReadonlySet<string>,
    report: SyncReport,
  ): string[] {
    const max = this.#maxBytes
    const groups = new Map<string, string[]>()
    for (const relative of relatives) {
      const told = toldAs(relative)
      groups.set(told, [...(groups.get(told) ?? []), relative])
    }
    const room: string[] = []
    const before = this.#keptBytes
    for (const [told, members] of groups) {
      let growth = 0
      for (const relative of members)
        growth += keptGrowth(upper, this.folder, relative, below, opaque)
      // Recorded, else measured (once a process, and again after a yield removed some), then
      // kept in step.
      this.#keptBytes ??= this.#keep?.keptBytes() ?? allocatedBytes(this.folder, '')
      if (growth > 0 && this.#keptBytes + growth > max) {
        report.refused.push({
          path: told,
          reason: `not kept in the jail: with it, what this ${this.#what}'s jail keeps would take ${formatBytes(this.#keptBytes + growth)} of disk, over the ${formatBytes(max)} it may keep (jail.maxKeptBytes in eitri's configuration), so this command's change there is gone; remove what is no longer needed (rm -rf the build output), or discard the fork, and run it again`,
        })
        continue
      }
      this.#keptBytes += growth
      room.push(...members)
    }
    if (this.#keptBytes !== before) this.#keep?.saveKeptBytes(this.#keptBytes)
    return room
  }

  /**
   * Removes what the kept layer holds where the workspace now has an entry of its own: a kept
   * repository the workspace now has a folder for (a person's `git init`), an ignored file the
   * fork now tracks, or a kept folder where the fork now has a file or link (a folder in a
   * higher layer hides a file below it, so the command would see the kept folder, not the
   * fork's file). The workspace wins; the kept entry goes, with all it holds.
   */
  async yieldKept(): Promise<void> {
    const before = this.#kept.size
    for (const yielded of await this.keptYields()) {
      removePinned(this.folder, yielded)
      for (const other of [...this.#kept]) {
        if (isWithin(other, yielded)) this.#kept.delete(other)
      }
    }
    if (this.#kept.size !== before) {
      this.#keptBytes = undefined
      this.#keep?.saveKeptBytes(undefined)
      this.#keep?.save(this.#kept)
    }
  }

  /** Where the kept layer must give way now (see {@link yieldKept}); changes nothing. */
  async keptYields(): Promise<string[]> {
    const yields: string[] = []
    for (const relative of this.#kept) {
      if (isWithinAny(relative, yields)) continue
      const yielded = await this.#yieldedAt(relative)
      if (yielded !== undefined) yields.push(yielded)
    }
    return yields
  }

  /**
   * Where the kept layer must give way for the kept path `relative`: its outermost folder the
   * workspace has a file or link at, or `relative` itself when the workspace has it; undefined
   * when the workspace has nothing there.
   */
  async #yieldedAt(relative: string): Promise<string | undefined> {
    const parts = relative.split('/')
    for (let index = 1; index < parts.length; index++) {
      const folder = parts.slice(0, index).join('/')
      const kind = await this.#tree.kind(folder)
      if (kind === undefined) return undefined
      if (kind !== 'directory') return folder
    }
    return (await this.#tree.stat(relative)) === undefined ? undefined : relative
  }

  /** Adds paths to the kept ones, listed durably before they move in (fork-keep.ts). */
  #listKept(relatives: readonly string[]): void {
    const before = this.#kept.size
    for (const relative of relatives) this.#kept.add(relative)
    if (this.#kept.size !== before) this.#keep?.save(this.#kept)
  }

  /** Why a fork's write stayed in its jail, as the model reads it. */
  #apartReason(told: string): string {
    const what =
      told.split('/').at(-1) === '.git'
        ? "git's own files: what git does in a fork (a commit, a branch) stays in this fork's jail, never in the user's repository"
        : "ignored by a .gitignore: what this command wrote there (not the whole folder: the rest is main's, as it is) stays in this fork's jail for later commands, is not a change of the fork and is never merged"
    if (this.#keep !== undefined)
      return `${what}; kept with the fork, also when eitri restarts, until the fork is merged or discarded`
    return `${what}; gone when this eitri process ends (${this.#notKept ?? 'not kept with the fork'})`
  }
}
