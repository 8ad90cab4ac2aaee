/**
 * @module workspace/snapshot-log
 * Where snapshots of main are kept: each is a commit in eitri's history, with no parent, named
 * by a numbered reference (`refs/eitri/snapshots/N`), so pruning one is deleting its reference.
 * Its tree holds `files/` (main's files) and `git-refs` (the user's git references); its
 * message holds the record (snapshot-record.ts). A snapshot of unchanged files reuses their
 * tree: a record costs a commit object and a reference file.
 */
import { randomBytes } from 'node:crypto'
import fs from 'node:fs'
import path from 'node:path'
import { EitriError } from '../errors/eitri-error.ts'
import { encodeTree, parseTree, type TreeEntry } from './git/git-objects.ts'
import { runGit } from './git/run-git.ts'
import type { WorkspaceHistory } from './history.ts'
import {
  decodeRecord,
  encodeRecord,
  type SnapshotFields,
  type SnapshotRecord,
} from './snapshot-record.ts'
import { decodeRefs, type GitRefs } from './user-git-refs.ts'
import { isListedSnapshot } from '../ports/line-control.ts'

/** The namespace of snapshot references. */
export const SNAPSHOT_REF_PREFIX = 'refs/eitri/snapshots/'

/** The files and references one snapshot holds. */
export interface SnapshotContents {
  /** The tree of main's files. */
  readonly files: string
  /** The user's git references, when recorded. */
  readonly refs?: GitRefs
  /** Every path left out (the record itself lists only the first ones). */
  readonly skipped: readonly string[]
}

/** The snapshots of one workspace. */
export class SnapshotLog {
  readonly #history: WorkspaceHistory
  #next: number | undefined

  constructor(history: WorkspaceHistory) {
    this.#history = history
  }

  /**
   * The tree of a snapshot holding `files`, the references' text and the list of files left
   * out for their size (each written only if new).
   */
  contentTree(files: string, refsText: string | undefined, skipped: readonly string[]): string {
    const entries: TreeEntry[] = [{ name: 'files', kind: 'directory', oid: files }]
    const blob = (name: string, text: string): void => {
      entries.push({
        name,
        kind: 'file',
        oid: this.#history.store.write('blob', Buffer.from(text, 'utf8')),
      })
    }
    if (refsText !== undefined) blob('git-refs', refsText)
    if (skipped.length > 0) blob('skipped', skipped.map((file) => `${file}\n`).join(''))
    return this.#history.store.write('tree', encodeTree(entries))
  }

  /** Writes a record over a content tree; answers it with its number. */
  async append(fields: SnapshotFields, contentTree: string): Promise<SnapshotRecord> {
    const commit = this.#history.commit(contentTree, [], encodeRecord(fields))
    const folder = path.join(this.#history.gitDir, SNAPSHOT_REF_PREFIX)
    fs.mkdirSync(folder, { recursive: true })
    let id = this.#next ?? this.#highest() + 1
    // The reference appears whole or not at all, and never replaces another process's: a link
    // fails if the name is taken, and the next number is tried. The temporary file lies outside
    // refs/, where git never mistakes one a crash left for a reference.
    const temporary = path.join(
      this.#history.gitDir,
      `new-snapshot-${randomBytes(6).toString('hex')}`,
    )
    fs.writeFileSync(temporary, `${commit}\n`, { mode: 0o644 })
    try {
      for (;;) {
        try {
          fs.linkSync(temporary, path.join(folder, String(id)))
          break
        } catch (error) {
          if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
          id++
        }
      }
    } finally {
      fs.rmSync(temporary, { force: true })
    }
    this.#next = id + 1
    return { id, commit, ...fields }
  }

  /** Every readable snapshot, newest first. */
  async list(): Promise<SnapshotRecord[]> {
    const output = await runGit({ gitDir: this.#history.gitDir }, [
      'for-each-ref',
      '--format=%(refname)%00%(objectname)%00%(contents)%00',
      SNAPSHOT_REF_PREFIX,
    ])
    const fields = output.stdout.toString('utf8').split('\0')
    const records: SnapshotRecord[] = []
    for (let index = 0; index + 2 < fields.length; index += 3) {
      const name = (fields[index] ?? '').trim()
      const id = Number(name.slice(SNAPSHOT_REF_PREFIX.length))
      if (!Number.isSafeInteger(id) || id < 0) continue
      const record = decodeRecord(id, fields[index + 1] ?? '', fields[index + 2] ?? '')
      if (record !== undefined) records.push(record)
    }
    return records.sort((a, b) => b.id - a.id)
  }

  /**
   * The snapshot a person or model names: its number (`12` or `#12`) or a prefix of its
   * commit (at least 7 hex digits).
   *
   * @throws EitriError `not_found` naming the newest snapshots.
   */
  async find(name: string | number): Promise<SnapshotRecord> {
    const records = await this.list()
    const text = String(name).trim().replace(/^#/, '')
    const found = /^\d+$/.test(text)
      ? records.find((record) => record.id === Number(text))
      : /^[0-9a-f]{7,40}$/.test(text)
        ? records.find((record) => record.commit.startsWith(text))
        : undefined
    if (found !== undefined) return found
    const newest = records
      .filter(isListedSnapshot)
      .slice(0, 5)
      .map((record) => `#${record.id}`)
      .join(', ')
    throw new EitriError(
      'not_found',
      `No snapshot ${JSON.stringify(String(name))}. ${newest === '' ? 'There are no snapshots yet.' : `The newest are ${newest}; \`eitri log\` lists them all.`}`,
    )
  }

  /** The tree of a snapshot's commit (its files, references and skipped list). */
  treeOf(record: SnapshotRecord): Promise<string> {
    return this.#history.treeOf(record.commit)
  }

  /** The files and references a snapshot holds. */
  async contents(record: SnapshotRecord): Promise<SnapshotContents> {
    const tree = await this.treeOf(record)
    const entries = parseTree((await this.#history.store.require(tree)).content)
    const files = entries.find((entry) => entry.name === 'files')?.oid
    if (files === undefined)
      throw new EitriError('not_found', `Snapshot #${record.id} holds no files tree.`)
    const text = async (name: string): Promise<string | undefined> => {
      const oid = entries.find((entry) => entry.name === name)?.oid
      return oid === undefined
        ? undefined
        : (await this.#history.store.require(oid)).content.toString('utf8')
    }
    const refs = await text('git-refs')
    const skipped = (await text('skipped'))?.split('\n').filter((file) => file !== '') ?? []
    return { files, ...(refs === undefined ? {} : { refs: decodeRefs(refs) }), skipped }
  }

  /** Deletes snapshots by number. */
  async remove(ids: readonly number[]): Promise<void> {
    if (ids.length === 0) return
    await runGit({ gitDir: this.#history.gitDir }, ['update-ref', '--stdin', '-z'], {
      input: ids.map((id) => `delete ${SNAPSHOT_REF_PREFIX}${id}\0\0`).join(''),
    })
  }

  /**
   * The highest snapshot number, read without a git process: the loose references (eitri's
   * own) and any packed ones (a person's `git gc`), so a new number never shadows a packed one.
   */
  #highest(): number {
    let highest = 0
    const consider = (name: string): void => {
      const id = Number(name)
      if (/^[0-9]+$/.test(name) && Number.isSafeInteger(id) && id > highest) highest = id
    }
    try {
      for (const name of fs.readdirSync(path.join(this.#history.gitDir, SNAPSHOT_REF_PREFIX)))
        consider(name)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
    }
    let packed = ''
    try {
      packed = fs.readFileSync(path.join(this.#history.gitDir, 'packed-refs'), 'utf8')
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
    }
    for (const line of packed.split('\n')) {
      const name = line.slice(line.indexOf(' ') + 1)
      if (/^[0-9a-f]{40} /.test(line) && name.startsWith(SNAPSHOT_REF_PREFIX))
        consider(name.slice(SNAPSHOT_REF_PREFIX.length))
    }
    return highest
  }
}
