/**
 * @module workspace/main-line-state
 * Main as eitri's history sees it now: its tree and its snapshots, shaped by the paths the
 * watcher saw change (everything git's stat cache finds changed without a watcher), and whether
 * the user's `.git` may have changed since the last snapshot record.
 */
import type { WorkspaceHistory } from './history.ts'
import type { MainState } from './main-snapshots.ts'
import type { MainWatcher } from './main-watcher.ts'

/** Main's tree and snapshots over what the watcher saw; used only inside the lines' queue. */
export class MainLineState {
  readonly #history: WorkspaceHistory
  readonly #watcher: MainWatcher | undefined
  /** True while a change under `.git` may not be in the newest snapshot's references yet. */
  #gitTouched = true

  constructor(history: WorkspaceHistory, watcher: MainWatcher | undefined) {
    this.#history = history
    this.#watcher = watcher
  }

  /** Marks a path of main changed (eitri's own writes to main). */
  touch(relativePath: string): void {
    this.#watcher?.touch(relativePath)
  }

  /** Says the user's repository changed (a restore moved its refs). */
  gitTouched(): void {
    this.#gitTouched = true
  }

  /**
   * Snapshots main in history: what the watcher saw change (or `paths`), else everything git's
   * stat cache finds changed. Only inside the queue.
   */
  async snapshot(
    message: string,
    options: { paths?: readonly string[] } = {},
  ): Promise<{ commit: string; tree: string; skipped: readonly string[] }> {
    const paths = options.paths ?? (await this.#watcher?.take())
    if (paths === undefined || paths.some(insideUserGit)) this.#gitTouched = true
    try {
      return await this.#history.snapshotMain({
        ...(paths === undefined ? {} : { paths }),
        message,
      })
    } catch (error) {
      // What the watcher saw must reach the next snapshot.
      if (options.paths === undefined)
        for (const changed of paths ?? []) this.#watcher?.touch(changed)
      throw error
    }
  }

  /**
   * Main for a snapshot record: its files (a tree; main's line of commits moves only when a
   * fork or a merge needs it), and whether `.git` changed since the last record.
   */
  async state(): Promise<MainState> {
    const main = await this.tree()
    const gitTouched = this.#gitTouched
    this.#gitTouched = false
    return { files: main.tree, skipped: main.skipped, gitTouched }
  }

  /** Main's tree as it is now, without a commit; only inside the queue. */
  async tree(): Promise<{ readonly tree: string; readonly skipped: readonly string[] }> {
    const paths = await this.#watcher?.take()
    if (paths === undefined || paths.some(insideUserGit)) this.#gitTouched = true
    try {
      return await this.#history.mainTree(paths === undefined ? {} : { paths })
    } catch (error) {
      for (const changed of paths ?? []) this.#watcher?.touch(changed)
      throw error
    }
  }

  /** Stops watching main. */
  close(): void {
    this.#watcher?.close()
  }
}

/** Whether a changed path lies in the user's `.git` (its references may have moved). */
function insideUserGit(changed: string): boolean {
  return changed === '.git' || changed.startsWith('.git/')
}
