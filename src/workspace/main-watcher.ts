/**
 * @module workspace/main-watcher
 * Knows which paths of main changed since the last snapshot, so a snapshot (and so a fork)
 * costs what changed, not the size of the workspace. Without a working watcher, every snapshot
 * asks git's stat cache about everything.
 */
import fs from 'node:fs'

/** Changes seen since the last `take`. */
export class MainWatcher {
  readonly #dirty = new Set<string>()
  #watcher: fs.FSWatcher | undefined
  /** True when the watcher may have missed a change: the next snapshot looks at everything. */
  #blind = true

  /** Starts watching `root`; paths for which `ignore` is true are not tracked. */
  constructor(root: string, ignore: (relativePath: string) => boolean) {
    try {
      this.#watcher = fs.watch(root, { recursive: true }, (_event, name) => {
        if (name === null) {
          this.#blind = true
          return
        }
        const relative = name.toString()
        if (!ignore(relative)) this.#dirty.add(relative)
      })
      this.#watcher.on('error', () => {
        this.#blind = true
      })
    } catch {
      this.#watcher = undefined
    }
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
    const blind = this.#blind || this.#watcher === undefined
    const paths = [...this.#dirty]
    this.#dirty.clear()
    this.#blind = false
    return blind ? undefined : paths
  }

  close(): void {
    this.#watcher?.close()
    this.#watcher = undefined
  }
}
