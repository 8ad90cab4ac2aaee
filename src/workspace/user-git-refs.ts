/**
 * @module workspace/user-git-refs
 * The user's own git references (the workspace's `.git`: loose references and `packed-refs`
 * read as one set, loose winning, plus `HEAD`), recorded with every snapshot of main so a
 * restore can put back a branch a command deleted or moved. Reading needs no git process;
 * writing goes through git (`update-ref`, `symbolic-ref`: its locks and reflogs) with no hooks
 * and none of the user's global configuration, and never touches the index or the work tree.
 */
import fs from 'node:fs'
import path from 'node:path'
import { runGit } from './git/run-git.ts'

/** Every reference: its name (`HEAD`, `refs/heads/main`) and value (a commit id or `ref: NAME`). */
export type GitRefs = ReadonlyMap<string, string>

/** What a snapshot knows of the user's references. */
export type RefsReading =
  | { readonly type: 'recorded'; readonly refs: GitRefs }
  | { readonly type: 'none'; readonly reason: string }

const OBJECT_ID = /^(?:[0-9a-f]{40}|[0-9a-f]{64})$/
const SYMBOLIC = /^ref: (refs\/\S+|HEAD)$/

/**
 * Whether `name` is a reference name git itself would accept (`git check-ref-format`'s rules),
 * so a file a command planted under `.git/refs` with a newline or a tab in its name can never
 * pass for another reference in a snapshot's list.
 */
export function isReferenceName(name: string): boolean {
  if (name === 'HEAD') return true
  return (
    name.startsWith('refs/') &&
    // no control characters, space or DEL, and none of ~ ^ : ? * [ \
    ![...name].some((character) => character <= ' ' || character === '\x7f') &&
    !/[~^:?*[\\]/.test(name) &&
    !name.includes('..') &&
    !name.includes('@{') &&
    !name.includes('//') &&
    !name.endsWith('/') &&
    !name.endsWith('.') &&
    name.split('/').every((part) => !part.startsWith('.') && !part.endsWith('.lock'))
  )
}

/** A packed-refs file as last parsed, kept while the file is unchanged. */
interface PackedCache {
  readonly signature: string
  readonly refs: Map<string, string>
}

/** Reads the references of the repository at `root/.git`. */
export class UserGitRefs {
  readonly #gitDir: string
  #packed: PackedCache | undefined

  constructor(root: string) {
    this.#gitDir = path.join(root, '.git')
  }

  /** The references now, or why none are recorded. Never throws. */
  read(): RefsReading {
    let stat: fs.Stats
    try {
      stat = fs.lstatSync(this.#gitDir)
    } catch {
      return { type: 'none', reason: 'no .git folder at the workspace root' }
    }
    if (!stat.isDirectory())
      return {
        type: 'none',
        reason: '.git is a file or link (a worktree or submodule): its references live elsewhere',
      }
    if (fs.existsSync(path.join(this.#gitDir, 'reftable')))
      return { type: 'none', reason: 'the repository keeps its references in a reftable' }
    try {
      const refs = new Map(this.#readPacked())
      this.#readLoose('refs', refs)
      const head = readValue(path.join(this.#gitDir, 'HEAD'))
      if (head !== undefined) refs.set('HEAD', head)
      return { type: 'recorded', refs }
    } catch (error) {
      return {
        type: 'none',
        reason: `the references could not be read: ${(error as Error).message}`,
      }
    }
  }

  #readPacked(): Map<string, string> {
    const file = path.join(this.#gitDir, 'packed-refs')
    let stat: fs.Stats
    try {
      stat = fs.statSync(file)
    } catch {
      return new Map()
    }
    const signature = `${stat.ino}:${stat.size}:${stat.mtimeMs}`
    if (this.#packed?.signature === signature) return this.#packed.refs
    const refs = new Map<string, string>()
    for (const line of fs.readFileSync(file, 'utf8').split('\n')) {
      if (line.startsWith('#') || line.startsWith('^')) continue
      const space = line.indexOf(' ')
      const oid = line.slice(0, space)
      const name = line.slice(space + 1)
      if (OBJECT_ID.test(oid) && isReferenceName(name)) refs.set(name, oid)
    }
    this.#packed = { signature, refs }
    return refs
  }

  #readLoose(relative: string, into: Map<string, string>): void {
    let entries: fs.Dirent[]
    try {
      entries = fs.readdirSync(path.join(this.#gitDir, relative), { withFileTypes: true })
    } catch {
      return
    }
    for (const entry of entries) {
      const name = `${relative}/${entry.name}`
      if (entry.isDirectory()) this.#readLoose(name, into)
      else if (entry.isFile() && isReferenceName(name)) {
        const value = readValue(path.join(this.#gitDir, name))
        if (value !== undefined) into.set(name, value)
      }
    }
  }
}

function readValue(file: string): string | undefined {
  let text: string
  try {
    text = fs.readFileSync(file, 'utf8').trim()
  } catch {
    return undefined
  }
  return OBJECT_ID.test(text) || SYMBOLIC.test(text) ? text : undefined
}

/** The references as text: one `NAME<TAB>VALUE` line each, sorted (git forbids tabs in names). */
export function encodeRefs(refs: GitRefs): string {
  return [...refs]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, value]) => `${name}\t${value}\n`)
    .join('')
}

/** The references from {@link encodeRefs}'s text; lines that do not parse are left out. */
export function decodeRefs(text: string): Map<string, string> {
  const refs = new Map<string, string>()
  for (const line of text.split('\n')) {
    const tab = line.indexOf('\t')
    if (tab <= 0) continue
    const name = line.slice(0, tab)
    const value = line.slice(tab + 1)
    if (isReferenceName(name) && (OBJECT_ID.test(value) || SYMBOLIC.test(value)))
      refs.set(name, value)
  }
  return refs
}

/** One reference a restore moves back: from its value now (undefined: gone) to the recorded one. */
export interface RefMove {
  readonly name: string
  readonly from?: string
  readonly to: string
}

/** The moves that bring `now` back to `recorded`. References made since are kept: never deleted. */
export function refMoves(recorded: GitRefs, now: GitRefs): RefMove[] {
  const moves: RefMove[] = []
  for (const [name, value] of recorded) {
    const current = now.get(name)
    if (current !== value)
      moves.push({ name, ...(current === undefined ? {} : { from: current }), to: value })
  }
  return moves
}

/** The names whose value differs between two sets (added, removed or moved). */
export function changedRefs(before: GitRefs, after: GitRefs): string[] {
  const names = new Set([...before.keys(), ...after.keys()])
  return [...names].filter((name) => before.get(name) !== after.get(name)).sort()
}

/**
 * Moves references of the repository at `root/.git` as git would (locks, reflog), each only if
 * it still holds `from`: a reference someone moved meanwhile is left alone and reported.
 * Answers the moves that failed, with git's reason.
 */
export async function applyRefMoves(
  root: string,
  moves: readonly RefMove[],
  reason: string,
): Promise<{ name: string; reason: string }[]> {
  const target = { gitDir: path.join(root, '.git') }
  const failed: { name: string; reason: string }[] = []
  for (const move of moves) {
    const symbolic = SYMBOLIC.exec(move.to)?.[1]
    const args =
      symbolic !== undefined
        ? ['symbolic-ref', '-m', reason, move.name, symbolic]
        : [
            'update-ref',
            '--no-deref',
            '-m',
            reason,
            move.name,
            move.to,
            // Only if it still holds what the restore saw ('' when it was gone: must not exist).
            move.from === undefined ? '' : OBJECT_ID.test(move.from) ? move.from : '',
          ]
    // A symbolic value seen before cannot be compared by update-ref: no expectation then.
    if (symbolic === undefined && move.from !== undefined && !OBJECT_ID.test(move.from)) args.pop()
    const output = await runGit(target, args, { check: false })
    if (output.status !== 0)
      failed.push({ name: move.name, reason: output.stderr.trim().split('\n')[0] ?? 'git failed' })
  }
  return failed
}
