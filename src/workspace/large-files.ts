/**
 * @module workspace/large-files
 * The files of main too large to snapshot (over a size bound, 64 MiB by default): they stay
 * out of eitri's history and are listed instead, so a snapshot never copies a disk image or a
 * data set on every call.
 */
import fs from 'node:fs'
import path from 'node:path'
import { runGit, type GitTarget } from './git/run-git.ts'

/** The default size bound of a snapshotted file. */
export const DEFAULT_MAX_FILE_BYTES = 64 * 1024 * 1024

/** Which files of main are over the bound, as of the last update. */
export class LargeFiles {
  readonly #root: string
  readonly #maxBytes: number
  readonly #paths = new Set<string>()
  /** True once a scan of the whole workspace established the set. */
  #complete = false

  constructor(root: string, maxBytes: number) {
    this.#root = root
    this.#maxBytes = maxBytes
  }

  /** The large files, sorted. */
  paths(): string[] {
    return [...this.#paths].sort()
  }

  /**
   * Brings the set up to date for `folders` (what git sees as new or modified there, ignored
   * files left out), or, once the set is complete and a watcher named every changed path
   * (`paths`, none of them a folder), for those paths alone, without a git process.
   * Answers the paths that became large in this update.
   */
  async update(options: {
    target: GitTarget
    folders: readonly string[]
    paths?: readonly string[]
  }): Promise<string[]> {
    const before = new Set(this.#paths)
    const watched = options.paths?.filter((changed) => !insideGit(changed))
    if (
      watched !== undefined &&
      this.#complete &&
      watched.every((changed) => !this.#isFolder(changed))
    ) {
      for (const changed of watched) this.#judge(changed)
    } else {
      const whole = options.folders.includes('.')
      for (const known of [...this.#paths])
        if (whole || options.folders.some((folder) => within(known, folder)))
          this.#paths.delete(known)
      const output = await runGit(options.target, [
        'ls-files',
        '-z',
        '--others',
        '--modified',
        '--exclude-standard',
        '--',
        ...options.folders.map((folder) => `:(literal)${folder}`),
      ])
      for (const candidate of output.stdout.toString('utf8').split('\0'))
        if (candidate !== '' && this.#isLarge(candidate)) this.#paths.add(candidate)
      if (whole) this.#complete = true
    }
    return [...this.#paths].filter((file) => !before.has(file))
  }

  #judge(changed: string): void {
    for (const known of [...this.#paths]) if (within(known, changed)) this.#paths.delete(known)
    if (this.#isLarge(changed)) this.#paths.add(changed)
  }

  #isLarge(relative: string): boolean {
    try {
      const stat = fs.lstatSync(path.join(this.#root, relative))
      return stat.isFile() && stat.size > this.#maxBytes
    } catch {
      return false
    }
  }

  #isFolder(relative: string): boolean {
    try {
      return fs.lstatSync(path.join(this.#root, relative)).isDirectory()
    } catch {
      return false
    }
  }
}

function within(file: string, folder: string): boolean {
  return folder === '.' || file === folder || file.startsWith(`${folder}/`)
}

/** git never snapshots a `.git` folder's contents, at any depth. */
function insideGit(relative: string): boolean {
  return relative.split('/').includes('.git')
}
