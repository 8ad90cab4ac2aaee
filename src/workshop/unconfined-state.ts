/**
 * @module workshop/unconfined-state
 * What a command run outside the jail meets, as the string an approval "for the session" is
 * keyed by: main's tree (its snapshot) and, since snapshots leave ignored files out, the
 * content of each ignored file or folder the command names (`sh ./local/build.sh` with
 * `local/` in `.gitignore`). A jailed command may rewrite such a file without asking, and it
 * comes back to main: the approved command would then run something the person never saw.
 *
 * A name that leads through a link (tracked, so not ignored itself) is keyed by where it leads,
 * and so is an absolute name that leads into main through a link on the host. A name read from
 * another folder than main's root (`cd src && sh ../local/build.sh`, `/proc/self/cwd/…`) cannot
 * be placed by its words either: such a command is asked every time.
 * A command that has the shell build names (a glob, a variable, a brace list, a `~`, a
 * substitution) cannot be keyed by its words: it is asked every time. What the command reaches
 * only indirectly (an ignored file a tracked script runs, installed packages) is not keyed
 * (decision 0057). What snapshots leave out (a nested repository, a file over their size
 * bound) and what lies in a repository folder (`.git/COMMIT_EDITMSG`, which a jailed
 * `git commit` writes) are keyed as an ignored path is: main's tree holds neither.
 */
import { createHash } from 'node:crypto'
import fs from 'node:fs/promises'
import path from 'node:path'
import { gitPlaceByName } from '../access/git-metadata/git-place.ts'
import { ignoredPathsOf } from '../workspace/ignored-paths.ts'
import type { DirectoryTree } from '../workspace/directory-tree.ts'

/**
 * What lets the shell build a name the words do not spell: expansions (`$`, backquotes), globs
 * (`*`, `?`, `[`), brace lists and `~`; anywhere in the command, quoted or not (over-broad).
 */
const SHELL_BUILT_NAME = /[$`*?[{~]/

/** Entries of a named ignored folder keyed at most; past this, the command is asked every time. */
export const MAX_KEYED_ENTRIES = 10_000
/** Absolute words outside main looked up on the host at most; past this, asked every time. */
export const MAX_ABSOLUTE_WORDS = 256
/** Bytes of named ignored files read for the key at most; past this, asked every time. */
export const MAX_KEYED_BYTES = 64 * 1024 * 1024

/** What a command run outside the jail meets, as far as its words tell. */
export interface UnconfinedState {
  /** `tree` alone when the command names no ignored path that exists, else the tree and a digest of those paths' content. */
  readonly files: string
  /**
   * The words cannot tell all it meets (names the shell builds, names read from another
   * folder, too much to read): an approval "for the session" holds for this run only, and
   * `files` says only what is known (main's tree).
   */
  readonly once: boolean
}

/** The key's state (see {@link UnconfinedState}). */
export async function unconfinedState(options: {
  /** Main's tree id (its snapshot). */
  readonly tree: string
  /** Main's folder. */
  readonly main: DirectoryTree
  readonly command: string
  /**
   * Whether main's snapshots leave a path out (a nested repository's file, one over the size
   * bound): like an ignored one, main's tree does not see it change, so it is keyed by content.
   */
  readonly leftOut?: ((relative: string) => boolean) | undefined
}): Promise<UnconfinedState> {
  const { main } = options
  const once: UnconfinedState = { files: options.tree, once: true }
  // `sh lo*/build.sh`, `d=local; sh $d/build.sh`: no word names what runs, so an approval holds
  // for this run only.
  if (SHELL_BUILT_NAME.test(options.command)) return once
  // `cd src && sh ../local/build.sh`: a word relative to another folder than main's root.
  if (pathWords(options.command).some(isPlacedElsewhere)) return once
  const ignored = ignoredPathsOf(main)
  const named: string[] = []
  const led = await intoMain(main.root, pathWords(options.command))
  if (led === undefined) return once
  const candidates = [...namedPaths(options.command, main.root), ...led]
  for (const candidate of await withLinksFollowed(main, candidates)) {
    // A word no path can be (too long, a NUL in it) names nothing.
    const stat = await main.stat(candidate).catch(() => undefined)
    if (stat === undefined) continue
    if (
      options.leftOut?.(candidate) === true ||
      gitPlaceByName(candidate).type === 'inside' ||
      (await ignored.isIgnored(candidate, stat.type === 'directory' ? 'directory' : 'file'))
    )
      named.push(candidate)
  }
  if (named.length === 0) return { files: options.tree, once: false }
  const digest = createHash('sha256')
  const budget = { entries: MAX_KEYED_ENTRIES, bytes: MAX_KEYED_BYTES }
  for (const relative of named.sort()) {
    digest.update(`${relative}\u0000`)
    // Too much to read: the approval holds for this run only.
    if (!(await addEntry(main, relative, digest, budget))) return once
  }
  return { files: `${options.tree} ignored:${digest.digest('hex')}`, once: false }
}

/**
 * Workspace-relative paths a command's words may name: each word between blanks, quotes and
 * shell operators, and the value of an `--option=value`, taken from main's folder (a word
 * absolute inside it too). An over-approximation: only those that exist and are ignored count.
 */
export function namedPaths(command: string, root: string): string[] {
  const found = new Set<string>()
  for (const part of pathWords(command)) {
    const absolute = part.startsWith('/')
    if (absolute && !part.startsWith(`${root}/`)) continue
    const relative = path.posix.normalize(absolute ? part.slice(root.length + 1) : part)
    if (relative === '.' || relative === '..' || relative.startsWith('../')) continue
    found.add(relative.replace(/\/+$/, ''))
  }
  return [...found]
}

/**
 * Every word of `command` and each `=`-separated part of one: split at blanks, quotes and
 * operators (a word inside `"$(cat local/x)"`), and as the shell joins quoted pieces.
 */
function pathWords(command: string): string[] {
  const words = [...command.split(/[\s;&|<>()`'"]+/), ...shellWords(command)]
  return words.flatMap((word) => word.split('=')).filter((part) => part !== '')
}

/**
 * Whether a word names a path from another folder than main's root: relative and leading up
 * (`../local/build.sh`, `src/../../x`), or through a process's own folder in /proc
 * (`/proc/self/cwd` is main for the command).
 */
function isPlacedElsewhere(word: string): boolean {
  if (word.startsWith('/')) return /^\/proc\//.test(path.posix.normalize(word))
  const relative = path.posix.normalize(word)
  return relative === '..' || relative.startsWith('../')
}

/**
 * The absolute words outside main's folder that lead into it through links on the host
 * (`~/work/project` a link to main), as paths relative to main; undefined past
 * {@link MAX_ABSOLUTE_WORDS}.
 */
async function intoMain(root: string, words: readonly string[]): Promise<string[] | undefined> {
  const real = await fs.realpath(root)
  const found: string[] = []
  const absolute = new Set(
    words.filter((word) => word.startsWith('/') && !word.startsWith(`${root}/`)),
  )
  // Each is a look at the host's disk: past this many, the command is not keyed at all.
  if (absolute.size > MAX_ABSOLUTE_WORDS) return undefined
  for (const word of absolute) {
    if (word.length > 4096) continue
    const led = await fs.realpath(word).catch(() => undefined)
    if (led?.startsWith(`${real}/`) === true) found.push(led.slice(real.length + 1))
  }
  return found
}

/**
 * The words of `command` as the shell reads literal text: quotes removed and the pieces next to
 * each other joined (`lo''cal/build.sh`, `loc\\al/build.sh` are `local/build.sh`), a backslash
 * outside single quotes taking the next character, blanks and operators between words.
 */
function shellWords(command: string): string[] {
  const words: string[] = []
  let word = ''
  let quote: "'" | '"' | undefined
  for (let index = 0; index < command.length; index++) {
    const character = command[index] as string
    const next = command[index + 1]
    if (quote === "'") {
      if (character === "'") quote = undefined
      else word += character
    } else if (character === '\\' && next !== undefined) {
      index++
      // In double quotes a backslash escapes only these; before another it stays.
      if (quote === '"' && !'$`"\\\n'.includes(next)) word += character
      if (next !== '\n') word += next
    } else if (quote === '"') {
      if (character === '"') quote = undefined
      else word += character
    } else if (character === "'" || character === '"') {
      quote = character
    } else if (/[\s;&|<>()`]/.test(character)) {
      if (word !== '') words.push(word)
      word = ''
    } else {
      word += character
    }
  }
  if (word !== '') words.push(word)
  return words
}

/**
 * `candidates` and, for each that leads through a link, where it leads in main: `sh
 * tools/build.sh` with a tracked link `tools -> local` runs the ignored `local/build.sh`, which
 * the tree (a link's target only) does not see change. A link out of main is not followed.
 */
async function withLinksFollowed(
  main: DirectoryTree,
  candidates: readonly string[],
): Promise<string[]> {
  const root = await fs.realpath(main.root)
  const all = new Set(candidates)
  for (const candidate of candidates) {
    const real = await fs.realpath(path.join(root, candidate)).catch(() => undefined)
    if (real === undefined || !real.startsWith(`${root}/`)) continue
    all.add(real.slice(root.length + 1))
  }
  return [...all]
}

/** Adds one entry (a folder with all it holds) to `digest`; false past the budget. */
async function addEntry(
  main: DirectoryTree,
  relative: string,
  digest: ReturnType<typeof createHash>,
  budget: { entries: number; bytes: number },
): Promise<boolean> {
  if (--budget.entries < 0) return false
  // A folder the owner may not enter: what is in it cannot be keyed, so it is asked every time.
  const stat = await main.stat(relative).catch(() => null)
  if (stat === null) return false
  if (stat === undefined) {
    digest.update('missing\u0000')
    return true
  }
  digest.update(`${stat.type} ${stat.mode}\u0000`)
  if (stat.type === 'symlink') {
    const target = await main.readlink(relative)
    digest.update(`${target}\u0000`)
    // What it leads to in main counts too (`node_modules/.bin/x -> ../pkg/bin/x`).
    const led = namedPaths(
      target.startsWith('/') ? target : path.posix.join(path.posix.dirname(relative), target),
      main.root,
    )[0]
    if (led !== undefined && !(await addEntry(main, led, digest, budget))) return false
  } else if (stat.type === 'file') {
    budget.bytes -= stat.size
    if (budget.bytes < 0) return false
    // Grown or gone since the look: asked every time rather than keyed by half a file.
    const content = await main.readFile(relative, { maxBytes: stat.size }).catch(() => undefined)
    if (content === undefined) return false
    digest.update(content)
  } else if (stat.type === 'directory') {
    for (const entry of await main.list(relative)) {
      digest.update(`${entry.name}\u0000`)
      if (!(await addEntry(main, `${relative}/${entry.name}`, digest, budget))) return false
    }
  }
  return true
}
