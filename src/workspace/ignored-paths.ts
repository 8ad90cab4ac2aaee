/**
 * @module workspace/ignored-paths
 * Which paths of a workspace line its `.gitignore` files ignore, as git judges an untracked
 * path: every folder's `.gitignore` applies to what lies below it, relative to that folder; a
 * deeper file's patterns beat a shallower one's, and within one file the last matching pattern
 * wins (`!` re-includes); a folder that is ignored hides everything below it, so a
 * `.gitignore` inside it is never read. eitri's snapshots get this from git itself (history.ts
 * runs `git add` over the folder); the file tools get it from here, and the tests hold the two
 * to the same answers.
 *
 * Each folder's patterns are parsed once and kept while the file's stamp (its content id, or
 * its size and time) stays the same; a walk looks at each folder's stamp once.
 */
import ignore, { type Ignore } from 'ignore'
import { EitriError } from '../errors/eitri-error.ts'
import type { WorkspaceTree } from './workspace-tree.ts'

/** What the rules read: a workspace line's tree (main's folder or a fork). */
export type IgnoreSource = Pick<WorkspaceTree, 'stat' | 'readFile' | 'signature'>

/** The name of the files holding the patterns. */
const GITIGNORE = '.gitignore'

/**
 * Largest `.gitignore` read; a larger one is skipped, as git skips one over its own (much
 * larger) bound: its patterns would cost more than the walk they spare.
 */
export const MAX_GITIGNORE_BYTES = 4 * 1024 * 1024

/**
 * A file changed this recently may change again within the same time stamp without its size
 * changing: its parsed patterns are not kept past the current walk (git's "racily clean").
 */
const RACY_MS = 2_000

/** One folder's patterns as last read. */
interface FolderRules {
  /** undefined: not to be trusted past the walk that read it. */
  readonly stamp: string | undefined
  /** undefined: the folder has no `.gitignore` (or none that can be read). */
  readonly rules: Ignore | undefined
  /** The patterns, kept to build the rare variant {@link IgnorePass} needs. */
  readonly text: string
  /** Variants with some folders below re-included, by those folders. */
  readonly variants: Map<string, Ignore>
}

const NO_RULES: FolderRules = Object.freeze({
  stamp: 'none',
  rules: undefined,
  text: '',
  variants: new Map<string, Ignore>(),
})

/** The ignore rules of one workspace line, kept between walks. */
export class IgnoredPaths {
  readonly #source: IgnoreSource
  readonly #folders = new Map<string, FolderRules>()

  constructor(source: IgnoreSource) {
    this.#source = source
  }

  /**
   * A look at the rules as they are now: each folder's `.gitignore` is checked once for the
   * life of the pass. Start one per walk.
   */
  pass(): IgnorePass {
    return new IgnorePass(this)
  }

  /**
   * Whether git would ignore the untracked `path` (workspace-relative, `/`-separated): by a
   * pattern of its own, or because a folder holding it is ignored.
   */
  async isIgnored(path: string, type: 'file' | 'directory'): Promise<boolean> {
    const pass = this.pass()
    const parts = path.split('/').filter((part) => part !== '' && part !== '.')
    let folder = ''
    for (let index = 0; index < parts.length; index++) {
      await pass.load(folder)
      const entry = folder === '' ? parts[index]! : `${folder}/${parts[index]!}`
      const last = index === parts.length - 1
      if (pass.ignored(entry, last ? type === 'directory' : true)) return true
      folder = entry
    }
    return false
  }

  /** @internal The rules of `folder`, read again only when its `.gitignore` changed. */
  async read(folder: string, present: boolean | undefined): Promise<FolderRules> {
    const file = folder === '' ? GITIGNORE : `${folder}/${GITIGNORE}`
    if (present === false) {
      this.#folders.delete(folder)
      return NO_RULES
    }
    const known = this.#folders.get(folder)
    const stamp = await this.#stamp(file)
    if (stamp === 'none') {
      this.#folders.delete(folder)
      return NO_RULES
    }
    if (known !== undefined && stamp !== undefined && known.stamp === stamp) return known
    const text = await this.#text(file)
    const rules: FolderRules = {
      stamp,
      rules: text === undefined ? undefined : ignore({ ignorecase: false }).add(text),
      text: text ?? '',
      variants: new Map(),
    }
    this.#folders.set(folder, rules)
    return rules
  }

  /**
   * The file's stamp: `none` when it is not a regular file (git reads no `.gitignore` through a
   * link), undefined when it changed too recently to be trusted.
   */
  async #stamp(file: string): Promise<string | undefined> {
    const stat = await this.#source.stat(file).catch(() => undefined)
    if (stat?.type !== 'file') return 'none'
    if (stat.size > MAX_GITIGNORE_BYTES) return 'none'
    const signature = await this.#source.signature?.(file).catch(() => undefined)
    if (signature !== undefined) return signature
    if (Math.abs(Date.now() - stat.modifiedMs) < RACY_MS) return undefined
    return `${stat.size}:${stat.modifiedMs}`
  }

  async #text(file: string): Promise<string | undefined> {
    try {
      const bytes = await this.#source.readFile(file, { maxBytes: MAX_GITIGNORE_BYTES })
      // git skips a byte order mark at the start.
      return new TextDecoder().decode(bytes).replace(/^\uFEFF/, '')
    } catch {
      // Gone or grown since its stat, or unreadable: git reads no patterns from it either.
      return undefined
    }
  }
}

/**
 * One look at the rules, for one walk. `load` a folder before judging what it holds; the
 * folders above it are loaded with it.
 */
export class IgnorePass {
  readonly #owner: IgnoredPaths
  readonly #loaded = new Map<string, FolderRules>()

  constructor(owner: IgnoredPaths) {
    this.#owner = owner
  }

  /**
   * Reads the rules of `folder` and of every folder above it. `present` tells whether the
   * folder holds a `.gitignore` when the caller has just listed it (sparing a stat).
   */
  async load(folder: string, present?: boolean): Promise<void> {
    if (this.#loaded.has(folder)) return
    if (folder !== '') await this.load(parentOf(folder))
    this.#loaded.set(folder, await this.#owner.read(folder, present))
  }

  /**
   * Whether `path` is ignored by a pattern of its own, its folders being known not to be
   * (a walk never enters an ignored one). Its folder must have been loaded.
   */
  ignored(path: string, isDirectory: boolean): boolean {
    const subject = isDirectory ? `${path}/` : path
    for (let folder = parentOf(path); ; folder = parentOf(folder)) {
      const rules = this.#loaded.get(folder)
      if (rules === undefined)
        throw new EitriError('tool_failed', `ignore rules of ${folder || '.'} judged before loaded`)
      if (rules.rules !== undefined) {
        const relative = folder === '' ? subject : subject.slice(folder.length + 1)
        const result = this.#test(rules, relative)
        if (result.ignored) return true
        if (result.unignored) return false
      }
      if (folder === '') return false
    }
  }

  /**
   * `relative` against one folder's patterns alone. The `ignore` package also ignores a path
   * whose folder these patterns ignore; but a folder the walk entered was re-included deeper
   * down, and git then judges the path by its own matches only: those folders are re-included
   * here too, by anchored patterns that match nothing else.
   */
  #test(rules: FolderRules, relative: string): { ignored: boolean; unignored: boolean } {
    const base = rules.rules as Ignore
    const trimmed = relative.endsWith('/') ? relative.slice(0, -1) : relative
    const cut = trimmed.lastIndexOf('/')
    if (cut === -1 || !base.test(`${trimmed.slice(0, cut)}/`).ignored) return base.test(relative)
    const above = trimmed.slice(0, cut)
    let variant = rules.variants.get(above)
    if (variant === undefined) {
      const parts = above.split('/')
      const reincluded = parts.map((_, index) => `!/${escape(parts.slice(0, index + 1))}/`)
      variant = ignore({ ignorecase: false }).add(rules.text).add(reincluded)
      rules.variants.set(above, variant)
    }
    return variant.test(relative)
  }
}

function parentOf(path: string): string {
  const cut = path.lastIndexOf('/')
  return cut === -1 ? '' : path.slice(0, cut)
}

/** Folder names as a literal pattern: wildcards, escapes and trailing spaces escaped. */
function escape(parts: readonly string[]): string {
  return parts
    .map((part) =>
      part.replace(/[*?[\\]/g, '\\$&').replace(/ +$/, (spaces) => spaces.replaceAll(' ', '\\ ')),
    )
    .join('/')
}

const shared = new WeakMap<IgnoreSource, IgnoredPaths>()

/** The rules of a tree, shared by everyone who asks about the same tree. */
export function ignoredPathsOf(source: IgnoreSource): IgnoredPaths {
  let paths = shared.get(source)
  if (paths === undefined) {
    paths = new IgnoredPaths(source)
    shared.set(source, paths)
  }
  return paths
}
