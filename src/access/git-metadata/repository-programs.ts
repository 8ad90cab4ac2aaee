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

/** A walk for nested repositories older than this is made again (in the background). */
const REDISCOVER_MS = 30_000
/** Folders the walk for nested repositories reads at once. */
const WALK_READS_AT_ONCE = 16
/** The walk for nested repositories stops after this many entries. */
const MAX_DISCOVERED_ENTRIES = 2_000_000

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

  #enclosing: string | undefined
  #discovered: { at: number; workTrees: string[] } | undefined
  #discovering: Promise<void> | undefined

  constructor(options: RepositoryProgramsOptions) {
    this.#options = options
    this.#enclosing = enclosingWorkTree(options.root)
  }

  /**
   * Starts what the first {@link programPaths} needs (the walk for nested repositories and the
   * root's configuration) now, while nothing waits, so the first write does not pay for it.
   * Settles when done; never rejects.
   */
  prepare(): Promise<void> {
    return this.programPaths([]).then(
      () => undefined,
      () => undefined,
    )
  }

  /**
   * What the workspace's repositories name inside it: the root's, the one the workspace lies
   * in (a workspace that is a folder of a larger repository), every nested one found in the
   * workspace (a repository's hooks path may point anywhere, not only below itself), and those
   * at `workTrees` (relative to the root; `''` is the root), found on a written path.
   */
  async programPaths(workTrees: readonly string[]): Promise<WorkspaceProgramPath[]> {
    const root = this.#options.root
    const hostTrees = new Set([
      root,
      ...(this.#enclosing === undefined ? [] : [this.#enclosing]),
      ...(await this.#nested()),
      ...workTrees.map((workTree) => (workTree === '' ? root : path.join(root, workTree))),
    ])
    const found: WorkspaceProgramPath[] = []
    for (const hostTree of hostTrees) found.push(...(await this.#ofWorkTree(hostTree)))
    return found
  }

  /**
   * The nested repositories of the workspace, found by one walk and found again in the
   * background when the last walk is older than {@link REDISCOVER_MS}.
   */
  async #nested(): Promise<string[]> {
    const discover = (): Promise<void> =>
      (this.#discovering ??= Promise.resolve()
        .then(async () => {
          const workTrees = await nestedWorkTrees(this.#options.root)
          this.#discovered = { at: Date.now(), workTrees }
        })
        .finally(() => {
          this.#discovering = undefined
        }))
    if (this.#discovered === undefined) await discover()
    else if (Date.now() - this.#discovered.at > REDISCOVER_MS)
      void discover().catch(() => undefined)
    return this.#discovered?.workTrees ?? []
  }

  /**
   * One repository's program paths, kept until a file they were read from changes: asking
   * costs a few `stat` calls, so every write may ask.
   */
  async #ofWorkTree(hostWorkTree: string): Promise<WorkspaceProgramPath[]> {
    const cached = this.#workTrees.get(hostWorkTree)
    if (cached !== undefined && cached.stamp === stampOf(cached.files)) return cached.paths
    const dotGit = path.join(hostWorkTree, '.git')
    const files = [
      dotGit,
      ...repositoryConfigs(hostWorkTree),
      ...(this.#options.globalConfigs ?? []),
    ]
    const read: string[] = []
    const paths: WorkspaceProgramPath[] = []
    const programs = await this.#programsOf(files.slice(1), hostWorkTree, read)
    // The default hooks folder: itself inside .git, but a link there (`.git/hooks ->
    // ../scripts/hooks`) makes its target the hooks folder, which must be protected as one.
    if (fs.lstatSync(dotGit, { throwIfNoEntry: false })?.isDirectory() === true) {
      programs.push({ hostPath: path.join(dotGit, 'hooks'), folder: true, key: 'core.hookspath' })
      read.push(path.join(dotGit, 'hooks'))
    }
    for (const program of programs) {
      for (const relative of this.#relative(program.hostPath))
        paths.push({ path: relative, folder: program.folder, key: program.key })
    }
    const watched = [dotGit, ...read]
    this.#workTrees.set(hostWorkTree, { files: watched, stamp: stampOf(watched), paths })
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
      // The file itself, missing or not: writing it (a global configuration in the workspace,
      // `$XDG_CONFIG_HOME/git/config`) could name a hooks path of the writer's choosing.
      programs.push({ hostPath: file, folder: false, key: 'a git configuration file' })
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

  /**
   * A host path as paths relative to the root: as named, and as reached through the links in
   * its existing part (a hooks path `.githooks` that is a link to `scripts/hooks` protects
   * both). None when outside.
   */
  #relative(hostPath: string): string[] {
    const root = this.#options.root
    const found = new Set<string>()
    for (const candidate of [hostPath, realExistingPrefix(hostPath)]) {
      if (candidate === root) found.add('')
      else if (candidate.startsWith(`${root}/`)) found.add(candidate.slice(root.length + 1))
    }
    return [...found]
  }
}

/** The work tree of the repository the folder `root` lies in (above it), if any. */
function enclosingWorkTree(root: string): string | undefined {
  for (let folder = path.dirname(root); ; folder = path.dirname(folder)) {
    if (fs.lstatSync(path.join(folder, '.git'), { throwIfNoEntry: false }) !== undefined)
      return folder
    if (path.dirname(folder) === folder) return undefined
  }
}

/**
 * Every folder below `root` that holds a `.git` (folder or file: a nested repository, a
 * submodule, a linked worktree), found without following links and without entering `.git`
 * folders, sorted. Stops after {@link MAX_DISCOVERED_ENTRIES} entries. Folders are read
 * asynchronously, {@link WALK_READS_AT_ONCE} at a time: the walk covers ignored folders too
 * (`node_modules`, tens of thousands of entries), and read synchronously it held the server's
 * one thread, and the write that asked first, for a tenth of a second per 20,000 entries,
 * again every {@link REDISCOVER_MS}; read one at a time it took two to five times as long.
 */
export function nestedWorkTrees(root: string): Promise<string[]> {
  const found: string[] = []
  const folders = [root]
  let seen = 0
  let reading = 0
  return new Promise((resolve) => {
    const next = (): void => {
      while (reading < WALK_READS_AT_ONCE && folders.length > 0 && seen < MAX_DISCOVERED_ENTRIES) {
        const folder = folders.pop() as string
        reading++
        fs.readdir(folder, { withFileTypes: true }, (error, entries) => {
          reading--
          if (error === null) {
            seen += entries.length
            for (const entry of entries) {
              if (entry.name === '.git') {
                if (folder !== root) found.push(folder)
              } else if (entry.isDirectory()) folders.push(path.join(folder, entry.name))
            }
          }
          next()
        })
      }
      if (reading === 0) resolve(found.sort())
    }
    next()
  })
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
