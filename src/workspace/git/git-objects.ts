/**
 * @module workspace/git/git-objects
 * Git's object encodings: blobs, trees and commits, read and written by eitri itself, so a
 * write in a fork costs a hash and a file, not a git process.
 */
import { createHash } from 'node:crypto'

/** The kind of an entry of a tree object. */
export type TreeEntryKind = 'file' | 'executable' | 'symlink' | 'directory' | 'gitlink'

/** One entry of a tree object. */
export interface TreeEntry {
  readonly name: string
  readonly kind: TreeEntryKind
  readonly oid: string
}

const MODE_OF: Readonly<Record<TreeEntryKind, string>> = {
  file: '100644',
  executable: '100755',
  symlink: '120000',
  directory: '40000',
  gitlink: '160000',
}

/** The kind a tree mode names. */
export function kindOfMode(mode: string): TreeEntryKind {
  switch (mode) {
    case '100644':
    case '100664':
      return 'file'
    case '100755':
      return 'executable'
    case '120000':
      return 'symlink'
    case '40000':
    case '040000':
      return 'directory'
    default:
      return 'gitlink'
  }
}

/** The mode string of an entry kind. */
export function modeOfKind(kind: TreeEntryKind): string {
  return MODE_OF[kind]
}

/** The object id and the bytes git stores (before compression) for `type` with `content`. */
export function encodeObject(
  type: 'blob' | 'tree' | 'commit',
  content: Uint8Array,
): { oid: string; bytes: Buffer } {
  const bytes = Buffer.concat([Buffer.from(`${type} ${content.byteLength}\0`), content])
  return { oid: createHash('sha1').update(bytes).digest('hex'), bytes }
}

/**
 * Parses a tree object's content; names are read as UTF-8, or as `latin1` for one character
 * per byte (names that must go back to git exactly).
 */
export function parseTree(content: Buffer, encoding: 'utf8' | 'latin1' = 'utf8'): TreeEntry[] {
  const entries: TreeEntry[] = []
  let index = 0
  while (index < content.length) {
    const space = content.indexOf(0x20, index)
    const nul = content.indexOf(0, space)
    const mode = content.toString('latin1', index, space)
    const name = content.toString(encoding, space + 1, nul)
    const oid = content.toString('hex', nul + 1, nul + 21)
    entries.push({ name, kind: kindOfMode(mode), oid })
    index = nul + 21
  }
  return entries
}

/** Encodes tree entries in git's order (folders sort as if their name ended in `/`). */
export function encodeTree(entries: readonly TreeEntry[]): Buffer {
  const sorted = [...entries].sort((a, b) => compareNames(sortKey(a), sortKey(b)))
  return Buffer.concat(
    sorted.map((entry) =>
      Buffer.concat([
        Buffer.from(`${modeOfKind(entry.kind)} ${entry.name}\0`, 'utf8'),
        Buffer.from(entry.oid, 'hex'),
      ]),
    ),
  )
}

/** Encodes a commit. */
export function encodeCommit(commit: {
  tree: string
  parents: readonly string[]
  message: string
  time?: Date
}): Buffer {
  const seconds = Math.floor((commit.time ?? new Date()).getTime() / 1000)
  const who = `eitri <eitri@eitri.invalid> ${seconds} +0000`
  const lines = [
    `tree ${commit.tree}`,
    ...commit.parents.map((parent) => `parent ${parent}`),
    `author ${who}`,
    `committer ${who}`,
    '',
    commit.message,
  ]
  return Buffer.from(`${lines.join('\n')}\n`, 'utf8')
}

/** When a commit was made (its committer time); undefined when it says none. */
export function timeOfCommit(content: Buffer): Date | undefined {
  const match = /^committer .* (\d+) [+-]\d{4}$/m.exec(content.toString('utf8'))
  return match?.[1] === undefined ? undefined : new Date(Number(match[1]) * 1000)
}

/** The tree a commit object names. */
export function treeOfCommit(content: Buffer): string {
  const match = /^tree ([0-9a-f]{40})/.exec(content.toString('latin1', 0, 64))
  if (match?.[1] === undefined) throw new Error('not a commit object')
  return match[1]
}

function sortKey(entry: TreeEntry): Buffer {
  return Buffer.from(entry.kind === 'directory' ? `${entry.name}/` : entry.name, 'utf8')
}

function compareNames(a: Buffer, b: Buffer): number {
  return Buffer.compare(a, b)
}
