/**
 * @module workspace/main-watcher
 * Knows which paths of main changed since the last snapshot, so a snapshot (and so a fork)
 * costs what changed, not the size of the workspace. Without a working watcher, every snapshot
 * asks git's stat cache about everything.
 *
 * It watches the folders git would look into, one watch per folder: not the folders main's
 * `.gitignore` files ignore (a `node_modules` of 50,000 files costs nothing), unless the
 * history still holds files there; and of the user's repository only what moves its
 * references. Node's recursive watch would walk and watch everything, ignored folders
 * included, which cost up to a second and a half before main's first command on a real
 * project. A folder that appears is watched as it appears; a changed `.gitignore` makes the
 * watcher blind (the next snapshot looks at everything) until it has walked main again.
 */
import fs from 'node:fs'
import path from 'node:path'
import type { IgnoredPaths, IgnorePass } from './ignored-paths.ts'

/** What the watcher needs to know about main. */
export interface MainWatcherOptions {
  /** Main's folder. */
  readonly root: string
  /** Paths never tracked (eitri's own state inside the workspace). */
  readonly excluded: (relativePath: string) => boolean
  /** Main's `.gitignore` rules. */
  readonly ignored: IgnoredPaths
  /** Folders the history holds files in: watched even where `.gitignore` now ignores them. */
  readonly trackedFolders: () => Promise<ReadonlySet<string>>
}

/** The user's repository, where only reference moves matter to a snapshot record. */
const USER_GIT = '.git'
const USER_GIT_WATCHED = new Set([USER_GIT, `${USER_GIT}/refs`])

/** Changes seen since the last `take`. */
export class MainWatcher {
  readonly #options: MainWatcherOptions
  readonly #dirty = new Set<string>()
  readonly #watchers = new Map<string, fs.FSWatcher>()
  /** True when the watcher may have missed a change: the next snapshot looks at everything. */
  #blind = true
  /** Walks under way; the watcher is blind until they end. */
  readonly #walks = new Set<Promise<void>>()
  /** No more watches could be made (the system's limit): blind for good. */
  #broken = false
  #closed = false

  constructor(options: MainWatcherOptions) {
    this.#options = options
    this.#walkAll()
  }

  /** Marks a path changed (eitri's own writes, which need not wait for the kernel's event). */
  touch(relativePath: string): void {
    this.#dirty.add(relativePath)
  }

  /**
   * The paths changed since the last take, or undefined when unknown (no watcher, or it may
   * have missed something). Empties the set.
   */
  async take(): Promise<string[] | undefined> {
    // Let events the kernel already queued reach the watcher first.
    await new Promise((resolve) => setImmediate(resolve))
    const blind = this.#blind || this.#walks.size > 0 || this.#broken
    const paths = [...this.#dirty]
    this.#dirty.clear()
    if (this.#walks.size === 0) this.#blind = false
    return blind ? undefined : paths
  }

  /** How many folders are watched (for tests and figures). */
  get watchedFolders(): number {
    return this.#watchers.size
  }

  close(): void {
    this.#closed = true
    for (const watcher of this.#watchers.values()) watcher.close()
    this.#watchers.clear()
  }

  /** Walks main whole (at the start, and when ignore rules changed), blind until done. */
  #walkAll(): void {
    this.#blind = true
    this.#track(this.#walk('', this.#options.ignored.pass(), lazy(this.#options.trackedFolders)))
  }

  /** Counts a walk as under way until it ends; a failed walk leaves the watcher blind. */
  #track(walk: Promise<void>): void {
    const tracked = walk
      .catch(() => {
        this.#broken = true
      })
      .finally(() => {
        this.#walks.delete(tracked)
      })
    this.#walks.add(tracked)
  }

  /** Resolves once no walk is under way (every folder seen so far is watched). */
  async walked(): Promise<void> {
    while (this.#walks.size > 0) await Promise.all(this.#walks)
  }

  /** Watches `folder` and every folder below it git would look into. */
  async #walk(
    folder: string,
    pass: IgnorePass,
    tracked: () => Promise<ReadonlySet<string>>,
  ): Promise<void> {
    if (this.#closed || this.#broken) return
    // Watch first, then list: whatever appears after the listing raises an event.
    if (!this.#watch(folder)) return
    const entries = await fs.promises
      .readdir(this.#absolute(folder), { withFileTypes: true })
      .catch(() => [])
    const userGit = folder === USER_GIT || folder.startsWith(`${USER_GIT}/`)
    if (!userGit)
      await pass.load(
        folder,
        entries.some((entry) => entry.name === '.gitignore' && entry.isFile()),
      )
    for (const entry of entries) {
      // A link is never followed: git records it as a link.
      if (!entry.isDirectory()) continue
      const relative = folder === '' ? entry.name : `${folder}/${entry.name}`
      if (this.#options.excluded(relative)) continue
      if (userGit || entry.name === USER_GIT) {
        if (USER_GIT_WATCHED.has(relative) || relative.startsWith(`${USER_GIT}/refs/`))
          await this.#walk(relative, pass, tracked)
        continue
      }
      if (pass.ignored(relative, true)) {
        // git still updates the files it holds below an ignored folder.
        const held = await tracked()
        if (held.has(relative)) await this.#walkHeld(relative, held)
        continue
      }
      await this.#walk(relative, pass, tracked)
    }
  }

  /** Watches the folders below an ignored one that the history holds files in. */
  async #walkHeld(folder: string, held: ReadonlySet<string>): Promise<void> {
    if (!this.#watch(folder)) return
    const entries = await fs.promises
      .readdir(this.#absolute(folder), { withFileTypes: true })
      .catch(() => [])
    for (const entry of entries) {
      const relative = `${folder}/${entry.name}`
      if (entry.isDirectory() && held.has(relative)) await this.#walkHeld(relative, held)
    }
  }

  /** One watch on one folder; false when it cannot be watched (gone, or no watch left). */
  #watch(folder: string): boolean {
    if (this.#watchers.has(folder)) return true
    let watcher: fs.FSWatcher
    try {
      watcher = fs.watch(this.#absolute(folder), (event, name) => this.#seen(folder, event, name))
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code
      if (code === 'ENOENT' || code === 'ENOTDIR') return false
      this.#broken = true
      return false
    }
    watcher.on('error', () => {
      this.#blind = true
      this.#unwatch(folder)
    })
    this.#watchers.set(folder, watcher)
    return true
  }

  #seen(folder: string, event: string, name: string | Buffer | null): void {
    if (name === null) {
      this.#blind = true
      return
    }
    const relative = folder === '' ? name.toString() : `${folder}/${name.toString()}`
    if (this.#options.excluded(relative)) return
    this.#dirty.add(relative)
    if (path.posix.basename(relative) === '.gitignore') {
      this.#walkAll()
      return
    }
    if (event === 'rename') this.#track(this.#follow(relative))
  }

  /**
   * A name appeared or went: a folder that appeared is watched with what it holds, and marked
   * changed again once watched (what was made in it before its watch began is then seen); a
   * folder that went is no longer watched under that name.
   */
  async #follow(relative: string): Promise<void> {
    const stat = await fs.promises.lstat(this.#absolute(relative)).catch(() => undefined)
    if (stat === undefined || !stat.isDirectory()) {
      this.#unwatch(relative)
      return
    }
    if (this.#watchers.has(relative)) return
    const parent = path.posix.dirname(relative) === '.' ? '' : path.posix.dirname(relative)
    if (!this.#watchers.has(parent)) return
    const pass = this.#options.ignored.pass()
    const userGit = relative === USER_GIT || relative.startsWith(`${USER_GIT}/`)
    if (userGit) {
      if (!USER_GIT_WATCHED.has(relative) && !relative.startsWith(`${USER_GIT}/refs/`)) return
    } else {
      await pass.load(parent)
      if (pass.ignored(relative, true)) return
    }
    await this.#walk(relative, pass, lazy(this.#options.trackedFolders))
    this.#dirty.add(relative)
  }

  /** Stops watching `folder` and every folder below it. */
  #unwatch(folder: string): void {
    for (const [watched, watcher] of this.#watchers) {
      if (watched === folder || watched.startsWith(`${folder}/`)) {
        watcher.close()
        this.#watchers.delete(watched)
      }
    }
  }

  #absolute(relative: string): string {
    return relative === '' ? this.#options.root : path.join(this.#options.root, relative)
  }
}

/** Runs `load` at most once, when first asked. */
function lazy<T>(load: () => Promise<T>): () => Promise<T> {
  let loaded: Promise<T> | undefined
  return () => (loaded ??= load())
}
