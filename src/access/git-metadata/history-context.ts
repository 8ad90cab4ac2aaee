/**
 * @module access/git-metadata/history-context
 * What the history rules read and share while they judge one repository folder: the host as
 * it is, the proposed contents — each read exactly once, so what is judged is what is written
 * (a background job may rewrite a file between two reads) — and the verdicts so far.
 */
import type { ObjectFormat } from '../../workspace/git/object-format.ts'
import type { PackCheck } from '../../workspace/git/object-checks.ts'
import type { StagedObject, TreeChanges, TreeComparison } from '../../workspace/git/tree-changes.ts'

/** A change to one path, as the history rules see it. */
export interface HistoryChange {
  readonly path: string
  readonly type: 'file' | 'directory' | 'symlink' | 'delete'
}

/** Reads what is on the host now (before the changes). */
export interface HistoryHost {
  kind(path: string): Promise<'file' | 'directory' | 'symlink' | 'other' | undefined>
  /** A file's content, at most `maxBytes` (undefined when missing or larger). */
  read(path: string, maxBytes: number): Promise<Buffer | undefined>
  /** Names in a folder (none when missing). */
  list(path: string): Promise<{ name: string; type: 'file' | 'directory' | 'symlink' | 'other' }[]>
  /** The object format the repository folder's configuration names. */
  objectFormat(gitDir: string): Promise<ObjectFormat>
  /** Which of `ids` the repository folder's object store lacks, as git reads the store. */
  missingObjects(gitDir: string, ids: readonly string[], format: ObjectFormat): Promise<Set<string>>
  /** Whether `pack` and `index` are a whole pack and the very index git makes of it. */
  verifyPack(
    gitDir: string,
    pack: Uint8Array,
    index: Uint8Array,
    format: ObjectFormat,
  ): Promise<PackCheck>
  /**
   * What checking out each comparison's `to` over its `from` changes, read from the repository
   * folder's object store and the `staged` object files (new, already checked).
   */
  treeChanges(
    gitDir: string,
    staged: readonly StagedObject[],
    comparisons: readonly TreeComparison[],
    format: ObjectFormat,
  ): Promise<TreeChanges[]>
  /** Each commit's parents, as git reads them (undefined: not all are commits git can read). */
  commitParents(
    gitDir: string,
    staged: readonly StagedObject[],
    commits: readonly string[],
    format: ObjectFormat,
  ): Promise<Map<string, string[]> | undefined>
  /** The targets of the links (blobs) `ids` (undefined: git cannot read them all). */
  linkTargets(
    gitDir: string,
    staged: readonly StagedObject[],
    ids: readonly string[],
    format: ObjectFormat,
  ): Promise<Map<string, string> | undefined>
}

/** Reads what a change would put at a path. */
export interface HistoryProposal {
  /** The new content of a changed file, at most `maxBytes` (undefined when larger or unreadable). */
  read(path: string, maxBytes: number): Promise<Buffer | undefined>
  /** Whether the new content of a changed file is byte for byte what the host holds. */
  sameAsHost(path: string): Promise<boolean>
}

/**
 * The proposed contents, each read once (bounded) and kept: the rules judge these bytes, and
 * the caller writes these bytes, never a second read of the same file.
 */
export class JudgedContents {
  readonly #proposal: HistoryProposal
  readonly #maxBytes: number
  readonly #read = new Map<string, Promise<Buffer | undefined>>()
  /** Every content read, by path. */
  readonly contents = new Map<string, Buffer>()

  constructor(proposal: HistoryProposal, maxBytes: number) {
    this.#proposal = proposal
    this.#maxBytes = maxBytes
  }

  /** Whether the proposed content at `path` is byte for byte the host's (nothing is written then). */
  sameAsHost(path: string): Promise<boolean> {
    return this.#proposal.sameAsHost(path)
  }

  /**
   * What is written at `path` instead of what was read: a rule that takes over only part of a
   * file (the index without its extensions) hands over the bytes it judged.
   */
  replace(path: string, bytes: Buffer): void {
    this.contents.set(path, bytes)
    this.#read.set(path, Promise.resolve(bytes))
  }

  /** The proposed content at `path`, read the first time only. */
  read(path: string): Promise<Buffer | undefined> {
    let pending = this.#read.get(path)
    if (pending === undefined) {
      pending = this.#proposal.read(path, this.#maxBytes).then((bytes) => {
        if (bytes !== undefined) this.contents.set(path, bytes)
        return bytes
      })
      this.#read.set(path, pending)
    }
    return pending
  }
}

/** A change inside a repository folder, with its path inside that folder. */
export interface InsideChange {
  readonly change: HistoryChange
  readonly inner: string
}

/** One repository folder being judged, and the verdicts so far. */
export interface RepositoryJudging {
  readonly gitDir: string
  readonly host: HistoryHost
  readonly format: ObjectFormat
  readonly judged: JudgedContents
  /** Refused changes, by path, with why. */
  readonly refused: Map<string, string>
  /** Changes that change nothing (an object written again, byte for byte). */
  readonly unchanged: Set<string>
  /** Derived files left out: not written, not a failure (git rebuilds them). */
  readonly dropped: Map<string, string>
  /** The largest file read whole. */
  readonly maxFileBytes: number
}
