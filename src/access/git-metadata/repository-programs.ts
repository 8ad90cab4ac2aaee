/**
 * @module access/git-metadata/repository-programs
 * The program paths of the repositories in one workspace folder, read from their
 * configuration (and the user's global configuration, whose relative hooks path applies to
 * every repository) and kept until a configuration file changes. The configuration files
 * themselves are protected, so only the person changes what is read here.
 */
import fs from 'node:fs'
import path from 'node:path'
import { readGitConfigFile, type GitConfigEntry } from '../../workspace/git/git-config-file.ts'
import { programPathsOf, type ProgramPath } from './program-paths.ts'

/** Includes followed from one configuration file, at most (git itself stops at 10 levels). */
const MAX_CONFIG_FILES = 32

/** A program path as a workspace-relative path. */
export interface WorkspaceProgramPath {
  readonly path: string
  readonly folder: boolean
  /** The configuration key that names it, and the file it is in, for the refusal. */
  readonly key: string
}

/** What the program paths of a workspace are read from. */
export interface RepositoryProgramsOptions {
  /** The host folder of main (a real path). */
  readonly root: string
  /** The user's home, for `~/` in values. */
  readonly home?: string | undefined
  /** The user's global and system configuration files (missing ones are skipped). */
  readonly globalConfigs?: readonly string[]
}

interface CachedFile {
  readonly signature: string
  readonly entries: GitConfigEntry[]
}

/** Reads and caches the program paths of a workspace's repositories. */
export class RepositoryPrograms {
  readonly #options: RepositoryProgramsOptions
  readonly #files = new Map<string, CachedFile>()
  readonly #workTrees = new Map<
    string,
    { files: readonly string[]; stamp: string; paths: WorkspaceProgramPath[] }
  >()

  constructor(options: RepositoryProgramsOptions) {
    this.#options = options
  }

  /**
   * The program paths that the repositories whose work trees are at `workTrees` (relative to
   * the root; `''` is the root) name inside the workspace.
   */
  async programPaths(workTrees: readonly string[]): Promise<WorkspaceProgramPath[]> {
    const found: WorkspaceProgramPath[] = []
    for (const workTree of new Set(workTrees)) found.push(...(await this.#ofWorkTree(workTree)))
    return found
  }

  /**
   * One repository's program paths, kept until a file they were read from changes: asking
   * costs a few `stat` calls, so every write may ask.
   */
  async #ofWorkTree(workTree: string): Promise<WorkspaceProgramPath[]> {
    const cached = this.#workTrees.get(workTree)
    if (cached !== undefined && cached.stamp === stampOf(cached.files)) return cached.paths
    const hostWorkTree =
      workTree === '' ? this.#options.root : path.join(this.#options.root, workTree)
    const dotGit = path.join(hostWorkTree, '.git')
    const files = [
      dotGit,
      ...repositoryConfigs(hostWorkTree),
      ...(this.#options.globalConfigs ?? []),
    ]
    const read: string[] = []
    const paths: WorkspaceProgramPath[] = []
    for (const program of await this.#programsOf(files.slice(1), hostWorkTree, read)) {
      const relative = this.#relative(program.hostPath)
      if (relative !== undefined)
        paths.push({ path: relative, folder: program.folder, key: program.key })
    }
    const watched = [dotGit, ...read]
    this.#workTrees.set(workTree, { files: watched, stamp: stampOf(watched), paths })
    return paths
  }

  /** Every program path named by `files` and what they include, relative values taken at `workTree`. */
  async #programsOf(
    files: readonly string[],
    workTree: string,
    read: string[],
  ): Promise<ProgramPath[]> {
    const programs: ProgramPath[] = []
    const queue = [...files]
    const seen = new Set<string>()
    while (queue.length > 0 && seen.size < MAX_CONFIG_FILES) {
      const file = queue.shift() as string
      if (seen.has(file)) continue
      seen.add(file)
      read.push(file)
      const entries = await this.#entries(file)
      const named = programPathsOf(entries, { file, workTree, home: this.#options.home })
      programs.push(...named.programs)
      queue.push(...named.includes)
    }
    return programs
  }

  async #entries(file: string): Promise<GitConfigEntry[]> {
    const signature = stampOf([file])
    const stat = fs.statSync(file, { throwIfNoEntry: false })
    if (stat === undefined || !stat.isFile()) {
      this.#files.delete(file)
      return []
    }
    const cached = this.#files.get(file)
    if (cached?.signature === signature) return cached.entries
    const entries = await readGitConfigFile(file)
    this.#files.set(file, { signature, entries })
    return entries
  }

  /** A host path as a path relative to the root, through links in its existing part; undefined outside. */
  #relative(hostPath: string): string | undefined {
    const real = realExistingPrefix(hostPath)
    const root = this.#options.root
    for (const candidate of new Set([hostPath, real])) {
      if (candidate === root) return ''
      if (candidate.startsWith(`${root}/`)) return candidate.slice(root.length + 1)
    }
    return undefined
  }
}

/** What the files are now (identity, size, times; `-` for a missing one), in one string. */
function stampOf(files: readonly string[]): string {
  return files
    .map((file) => {
      const stat = fs.lstatSync(file, { throwIfNoEntry: false })
      return stat === undefined
        ? '-'
        : `${stat.dev}:${stat.ino}:${stat.size}:${stat.mtimeMs}:${stat.ctimeMs}`
    })
    .join('|')
}

/** The configuration files of the repository whose work tree is `workTree`, if any. */
function repositoryConfigs(workTree: string): string[] {
  const dotGit = path.join(workTree, '.git')
  const stat = fs.lstatSync(dotGit, { throwIfNoEntry: false })
  if (stat === undefined) return []
  let gitDir = dotGit
  if (stat.isFile()) {
    // A worktree or submodule: `.git` says where its repository folder is.
    const pointer = /^gitdir: *(.+?)\s*$/m.exec(readSmall(dotGit))?.[1]
    if (pointer === undefined) return []
    gitDir = path.resolve(workTree, pointer)
  } else if (!stat.isDirectory()) {
    return []
  }
  const files = [path.join(gitDir, 'config'), path.join(gitDir, 'config.worktree')]
  const common = readSmall(path.join(gitDir, 'commondir')).trim()
  if (common !== '') files.push(path.join(path.resolve(gitDir, common), 'config'))
  return files
}

function readSmall(file: string): string {
  try {
    const descriptor = fs.openSync(file, fs.constants.O_RDONLY | fs.constants.O_NOFOLLOW)
    try {
      const buffer = Buffer.alloc(4096)
      const read = fs.readSync(descriptor, buffer, 0, buffer.length, 0)
      return buffer.subarray(0, read).toString('utf8')
    } finally {
      fs.closeSync(descriptor)
    }
  } catch {
    return ''
  }
}

/** The real path of the longest existing prefix of `hostPath`, with the rest appended. */
function realExistingPrefix(hostPath: string): string {
  const rest: string[] = []
  let current = hostPath
  for (;;) {
    try {
      return path.join(fs.realpathSync(current), ...rest.reverse())
    } catch {
      const parent = path.dirname(current)
      if (parent === current) return hostPath
      rest.push(path.basename(current))
      current = parent
    }
  }
}
