/**
 * @module access/git-metadata/checkout-rules
 * History may not deliver what a write may not. Refs and objects come back from the jail, so
 * a command could commit a file the path policy protects (a hook in the hooks folder the
 * configuration names, `.envrc`, editor settings) and point a branch or `HEAD` at that commit:
 * the next `git checkout` or `git reset --hard` on the host would write the file. So every name
 * that comes to lead to another commit is judged by what checking it out would write.
 *
 * What a checkout writes is the difference between the tree the work tree holds (the host's
 * `HEAD`, the base) and the new one. For a ref that already led somewhere on the host, only
 * paths that the change of the ref itself changed count: what the old commit already held
 * is not the command's doing (and was judged when it came). Every such path is put to the path
 * policy as a write (or a removal, or a link with its target) at its place in the work tree.
 * The work is bounded: too many commits named at once, or a tree change too large, is refused
 * rather than waved through.
 *
 * The stash is more than its commit: `git stash pop` restores the index from the stash's
 * second parent and writes every file of its third (the untracked files, a tree of its own),
 * so when the stash gains an entry those parents are judged too.
 */
import path from 'node:path'
import type {
  StagedObject,
  TreeChanges,
  TreeEntryChange,
} from '../../workspace/git/tree-changes.ts'
import type { RepositoryJudging } from './history-context.ts'

/** A name that comes to lead to another commit. */
export interface RefMove {
  /** The ref (`refs/heads/topic`, `HEAD`, a reflog's entry…), for the message. */
  readonly name: string
  /**
   * What the name led to on the host before, when that is the host's own state; undefined for
   * a new name, or one whose old value the command chose (a reflog line's old id).
   */
  readonly before?: string
  readonly after: string
  /**
   * The stash (`refs/stash` or an entry of its reflog): `git stash pop` also writes what its
   * second parent (the index) and third parent (the untracked files) hold, so both are judged.
   */
  readonly stash?: true
}

/** What judging entries found: the first one a command may not write, and why. */
export interface EntryRefusal {
  readonly change: TreeEntryChange
  /** The policy's reason, without its `Refused: ` and final period. */
  readonly reason: string
}

/** The write policy for a path a checkout would write: why not, or undefined. */
export type MayWrite = (
  path: string,
  change: { path: string; type: 'file' | 'directory' | 'symlink' | 'delete'; target?: string },
) => Promise<string | undefined>

/** Comparisons one judgement makes at most (each is one `git diff-tree`). */
export const MAX_COMPARISONS = 256

/** Judges ref moves of one repository folder by what checking them out would write. */
export class CheckoutJudge {
  readonly #repository: RepositoryJudging
  readonly #mayWrite: MayWrite
  readonly #base: () => Promise<string | undefined>
  readonly #staged: readonly StagedObject[]
  readonly #comparisons = new Map<string, Promise<TreeChanges>>()
  readonly #decisions = new Map<string, Promise<string | undefined>>()

  /**
   * @param base - the commit the host's `HEAD` leads to (undefined: none yet, the empty tree)
   * @param staged - the new object files accepted with the change (refs may lead to them)
   */
  constructor(
    repository: RepositoryJudging,
    mayWrite: MayWrite,
    base: () => Promise<string | undefined>,
    staged: readonly StagedObject[],
  ) {
    this.#repository = repository
    this.#staged = staged
    this.#mayWrite = mayWrite
    let pending: Promise<string | undefined> | undefined
    this.#base = () => (pending ??= base())
  }

  /** For each move, why checking it out would write what a command may not (undefined: fine). */
  async judge(moves: readonly RefMove[]): Promise<(string | undefined)[]> {
    const base = await this.#base()
    const stashes = moves.filter((move) => move.stash === true).map((move) => move.after)
    const { host, gitDir, format } = this.#repository
    const parents =
      stashes.length === 0
        ? new Map<string, string[]>()
        : await host.commitParents(gitDir, this.#staged, stashes, format)
    const pairs: [string | undefined, string][] = []
    for (const move of moves) {
      pairs.push([base, move.after])
      if (move.before !== undefined && move.before !== base) pairs.push([move.before, move.after])
      const [, index, untracked] = (move.stash === true && parents?.get(move.after)) || []
      if (index !== undefined) pairs.push([base, index])
      if (untracked !== undefined) pairs.push([undefined, untracked])
    }
    await this.#compare(pairs)
    const verdicts: (string | undefined)[] = []
    for (const move of moves) {
      const verdict = await this.#judgeOne(move, base)
      verdicts.push(
        verdict === undefined && move.stash === true
          ? await this.#judgeStash(move, base, parents)
          : verdict,
      )
    }
    return verdicts
  }

  /**
   * The first of `changes` (written over the work tree of this repository) that the write
   * policy refuses, and why; undefined when all may be written.
   */
  async firstRefused(changes: readonly TreeEntryChange[]): Promise<EntryRefusal | undefined> {
    for (const change of changes) {
      const reason = await this.#decide(change)
      if (reason !== undefined) {
        return { change, reason: reason.replace(/^Refused: /, '').replace(/\.$/, '') }
      }
    }
    return undefined
  }

  /** A place in the work tree, as the messages name it. */
  where(relative: string): string {
    return this.#inWorkTree(relative)
  }

  /** What `git stash pop` writes besides the stash's own tree: its index and untracked parents. */
  async #judgeStash(
    move: RefMove,
    base: string | undefined,
    parents: ReadonlyMap<string, readonly string[]> | undefined,
  ): Promise<string | undefined> {
    const leads = `${move.name} would lead to the stash ${move.after}`
    const found = parents?.get(move.after)
    if (found === undefined) {
      return `${leads}, and git could not read its parents to judge what \`git stash pop\` writes`
    }
    const [, index, untracked] = found
    const sides: [string | undefined, string | undefined, string][] = [
      [base, index, 'from its index (its second parent, with `git stash pop --index`)'],
      [undefined, untracked, 'from its untracked files (its third parent)'],
    ]
    for (const [from, to, what] of sides) {
      if (to === undefined) continue
      const changes = await this.#comparison(from, to)
      if (changes === undefined) {
        return `${leads}, more commits than are judged at once (${MAX_COMPARISONS}); bring them back in smaller steps`
      }
      if (!changes.ok) {
        return `${leads}, and what popping it writes ${what} cannot be judged: ${changes.reason}`
      }
      const refused = await this.firstRefused(changes.changes)
      if (refused === undefined) continue
      const where = this.#inWorkTree(refused.change.path)
      return `${leads}, and popping it writes ${where} ${what}, which a command may not write (${refused.reason}). Stash only files the command may write; a change to ${where} is the user's to make`
    }
    return undefined
  }

  async #judgeOne(move: RefMove, base: string | undefined): Promise<string | undefined> {
    const leads = `${move.name} would lead to ${move.after}`
    const fromBase = await this.#comparison(base, move.after)
    if (fromBase === undefined) {
      return `${leads}, more commits than are judged at once (${MAX_COMPARISONS}); bring them back in smaller steps`
    }
    if (!fromBase.ok)
      return `${leads}, and what checking it out writes cannot be judged: ${fromBase.reason}`
    let changed: ReadonlySet<string> | undefined
    if (move.before !== undefined && move.before !== base) {
      const fromBefore = await this.#comparison(move.before, move.after)
      if (fromBefore === undefined) {
        return `${leads}, more commits than are judged at once (${MAX_COMPARISONS}); bring them back in smaller steps`
      }
      if (!fromBefore.ok)
        return `${leads}, and what checking it out writes cannot be judged: ${fromBefore.reason}`
      changed = new Set(fromBefore.changes.map((change) => change.path))
    }
    const refused = await this.firstRefused(
      fromBase.changes.filter((change) => changed === undefined || changed.has(change.path)),
    )
    if (refused === undefined) return undefined
    const { change, reason } = refused
    const where = this.#inWorkTree(change.path)
    const verb = change.status === 'deleted' ? 'removes' : 'writes'
    return `${leads}, and checking that out ${verb} ${where}, which a command may not ${change.status === 'deleted' ? 'remove' : 'write'} (${reason}). Commit only files the command may write; a change to ${where} is the user's to make`
  }

  #decide(change: TreeEntryChange): Promise<string | undefined> {
    const where = this.#inWorkTree(change.path)
    const type =
      change.status === 'deleted'
        ? 'delete'
        : change.mode === '120000'
          ? 'symlink'
          : change.mode === '160000'
            ? 'directory'
            : 'file'
    // Written as it is: an absolute target leads wherever that path is on the host.
    if (type === 'symlink' && change.target?.startsWith('/') === true) {
      return Promise.resolve(
        `it would be a link to ${change.target}, and links must lead inside the workspace by a relative path`,
      )
    }
    const key = `${type}\0${where}\0${change.target ?? ''}`
    let pending = this.#decisions.get(key)
    if (pending === undefined) {
      pending = this.#mayWrite(where, {
        path: where,
        type,
        ...(change.target === undefined ? {} : { target: change.target }),
      })
      this.#decisions.set(key, pending)
    }
    return pending
  }

  /** A path of the repository's tree as a workspace path: below the folder that holds `.git`. */
  #inWorkTree(relative: string): string {
    const workTree = path.posix.dirname(this.#repository.gitDir)
    return workTree === '.' ? relative : `${workTree}/${relative}`
  }

  /** Runs the comparisons not made yet, together (one scratch repository), within the bound. */
  async #compare(pairs: readonly [string | undefined, string][]): Promise<void> {
    const wanted = new Map<string, [string | undefined, string]>()
    for (const [from, to] of pairs) {
      const key = `${from ?? ''}..${to}`
      if (this.#comparisons.has(key) || wanted.has(key)) continue
      if (this.#comparisons.size + wanted.size >= MAX_COMPARISONS) break
      wanted.set(key, [from, to])
    }
    if (wanted.size === 0) return
    const { host, gitDir, format } = this.#repository
    const all = host.treeChanges(
      gitDir,
      this.#staged,
      [...wanted.values()].map(([from, to]) => (from === undefined ? { to } : { from, to })),
      format,
    )
    let index = 0
    for (const key of wanted.keys()) {
      const at = index++
      this.#comparisons.set(
        key,
        all.then((results) => results[at] ?? { ok: false, reason: 'git gave no answer' }),
      )
    }
    await all
  }

  /** A comparison made before; undefined when it was past the bound. */
  async #comparison(from: string | undefined, to: string): Promise<TreeChanges | undefined> {
    return this.#comparisons.get(`${from ?? ''}..${to}`)
  }
}
