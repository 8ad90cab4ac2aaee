/**
 * Real repositories for the history rules' tests: one with loose and packed refs, an annotated
 * tag and a reflog; git itself as the oracle (which refs it lists and finds, what an object
 * holds); copies to run git or an attack in; the changes between a repository and its copy,
 * as the jail's mirror would list them; and forgeries (an object under another's name, a pack
 * whose index maps a known id to other content, a commit graph that forgets parents).
 */
import { execFileSync, spawnSync } from 'node:child_process'
import { createHash } from 'node:crypto'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { crc32, deflateSync } from 'node:zlib'
import type { HistoryChange, HistoryProposal } from '../../src/access/git-metadata/history-rules.ts'

/** git with no user or system configuration, and a fixed identity. */
export const GIT_TEST_ENV: NodeJS.ProcessEnv = {
  PATH: '/usr/local/bin:/usr/bin:/bin',
  LC_ALL: 'C',
  HOME: '/nonexistent',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_CONFIG_GLOBAL: '/dev/null',
  GIT_AUTHOR_NAME: 'person',
  GIT_AUTHOR_EMAIL: 'person@example.org',
  GIT_COMMITTER_NAME: 'person',
  GIT_COMMITTER_EMAIL: 'person@example.org',
}

/** A finished git command. */
export interface GitRun {
  readonly status: number
  readonly stdout: string
  readonly stderr: string
}

/** Runs git in `folder`. */
export function git(folder: string, args: readonly string[], input?: string): GitRun {
  const result = spawnSync('git', [...args], {
    cwd: folder,
    env: GIT_TEST_ENV,
    input: input ?? '',
    encoding: 'utf8',
  })
  return { status: result.status ?? -1, stdout: result.stdout, stderr: result.stderr }
}

/** Runs git in `folder` and answers its output; throws when it fails. */
export function gitOk(folder: string, args: readonly string[], input?: string): string {
  const run = git(folder, args, input)
  if (run.status !== 0) throw new Error(`git ${args.join(' ')} failed: ${run.stderr}`)
  return run.stdout.trim()
}

/** The ids of the fixture repository. */
export interface HistoryFixture {
  readonly folder: string
  readonly first: string
  readonly second: string
  /** The blob of `a.txt`: `a\n`. */
  readonly blob: string
  readonly format: 'sha1' | 'sha256'
}

/**
 * A repository at `folder/repo` (made in a fresh temporary folder when none is given): commits
 * `first` and `second` on main, `topic` and tag `v1` (annotated) packed, `loose` a loose ref,
 * a reflog for each.
 */
export function makeHistoryRepository(
  options: { format?: 'sha1' | 'sha256'; folder?: string } = {},
): HistoryFixture {
  const base = options.folder ?? fs.mkdtempSync(path.join(os.tmpdir(), 'eitri-history-'))
  const folder = path.join(base, 'repo')
  fs.mkdirSync(folder, { recursive: true })
  const format = options.format ?? 'sha1'
  gitOk(folder, ['init', '-q', '-b', 'main', `--object-format=${format}`])
  fs.writeFileSync(path.join(folder, 'a.txt'), 'a\n')
  gitOk(folder, ['add', 'a.txt'])
  gitOk(folder, ['commit', '-q', '-m', 'first'])
  const first = gitOk(folder, ['rev-parse', 'HEAD'])
  gitOk(folder, ['branch', 'topic'])
  gitOk(folder, ['tag', '-a', 'v1', '-m', 'v1'])
  gitOk(folder, ['pack-refs', '--all'])
  fs.writeFileSync(path.join(folder, 'b.txt'), 'b\n')
  gitOk(folder, ['add', 'b.txt'])
  gitOk(folder, ['commit', '-q', '-m', 'second'])
  const second = gitOk(folder, ['rev-parse', 'HEAD'])
  gitOk(folder, ['branch', 'loose'])
  const blob = gitOk(folder, ['rev-parse', `${first}:a.txt`])
  return { folder, first, second, blob, format }
}

/** A copy of a repository's work tree and `.git`, beside it. */
export function copyRepository(folder: string, name: string): string {
  const copy = path.join(path.dirname(folder), name)
  fs.rmSync(copy, { recursive: true, force: true })
  fs.cpSync(folder, copy, { recursive: true, preserveTimestamps: true })
  return copy
}

/**
 * The refs git can use in `folder`: listed by `git for-each-ref` and found by name
 * (`git cat-file --batch-check`, which looks each up as `git rev-parse` does). Empty when git
 * cannot read the refs at all.
 */
export function readableRefs(folder: string): Map<string, string> {
  const listed = git(folder, ['for-each-ref', '--format=%(refname) %(objectname)'])
  const refs = new Map<string, string>()
  if (listed.status !== 0) return refs
  const names = listed.stdout
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => line.split(' ') as [string, string])
  if (names.length === 0) return refs
  const found = git(
    folder,
    ['cat-file', '--batch-check=%(objectname)'],
    `${names.map(([name]) => name).join('\n')}\n`,
  )
  const answers = found.stdout.split('\n')
  names.forEach(([name, id], index) => {
    if (answers[index] === id) refs.set(name, id)
  })
  return refs
}

/** The names of `before` that git no longer lists and finds in `after` (a ref moved is kept). */
export function refsLost(before: Map<string, string>, after: Map<string, string>): string[] {
  return [...before.keys()].filter((name) => !after.has(name))
}

/**
 * What changed from `host` to `copy` below `.git`, as the mirror lists it (files, folders and
 * removals), with a proposal that reads the copy.
 */
export function repositoryChanges(
  host: string,
  copy: string,
): { changes: HistoryChange[]; proposal: HistoryProposal } {
  const list = (root: string): Map<string, 'file' | 'directory' | 'symlink'> => {
    const found = new Map<string, 'file' | 'directory' | 'symlink'>()
    for (const entry of fs.readdirSync(path.join(root, '.git'), {
      recursive: true,
      withFileTypes: true,
    })) {
      const relative = path.relative(root, path.join(entry.parentPath, entry.name))
      found.set(
        relative,
        entry.isSymbolicLink() ? 'symlink' : entry.isDirectory() ? 'directory' : 'file',
      )
    }
    return found
  }
  const before = list(host)
  const after = list(copy)
  const changes: HistoryChange[] = []
  for (const [relative, type] of after) {
    const was = before.get(relative)
    if (was === type && type === 'directory') continue
    if (
      was === type &&
      type === 'file' &&
      fs.readFileSync(path.join(host, relative)).equals(fs.readFileSync(path.join(copy, relative)))
    )
      continue
    changes.push({ path: relative, type })
  }
  for (const relative of before.keys())
    if (!after.has(relative)) changes.push({ path: relative, type: 'delete' })
  return { changes, proposal: folderProposal(host, copy) }
}

/** A proposal that reads new contents from `copy` (and compares them with `host`). */
export function folderProposal(host: string, copy: string): HistoryProposal {
  return {
    async read(relative, maxBytes) {
      const file = path.join(copy, relative)
      const stat = fs.lstatSync(file, { throwIfNoEntry: false })
      if (stat?.isFile() !== true || stat.size > maxBytes) return undefined
      return fs.readFileSync(file)
    },
    async sameAsHost(relative) {
      const old = path.join(host, relative)
      if (!fs.existsSync(old)) return false
      return fs.readFileSync(old).equals(fs.readFileSync(path.join(copy, relative)))
    },
  }
}

/** A proposal of the given contents. */
export function contentsProposal(
  host: string,
  contents: Readonly<Record<string, string | Buffer>>,
): HistoryProposal {
  const bytes = (relative: string): Buffer | undefined => {
    const content = contents[relative]
    return content === undefined ? undefined : Buffer.from(content)
  }
  return {
    async read(relative, maxBytes) {
      const content = bytes(relative)
      return content === undefined || content.byteLength > maxBytes ? undefined : content
    },
    async sameAsHost(relative) {
      const old = path.join(host, relative)
      const content = bytes(relative)
      return content !== undefined && fs.existsSync(old) && fs.readFileSync(old).equals(content)
    },
  }
}

/** The hash of a repository of `format`. */
function hashOf(format: 'sha1' | 'sha256', data: Buffer): Buffer {
  return createHash(format).update(data).digest()
}

/** A loose object file holding a blob of `content`, to be placed under another id's name. */
export function looseBlob(content: string): Buffer {
  const body = Buffer.from(content)
  return deflateSync(Buffer.concat([Buffer.from(`blob ${body.byteLength}\0`), body]))
}

/** The path of the loose object `id` inside a repository folder. */
export function loosePath(id: string): string {
  return `objects/${id.slice(0, 2)}/${id.slice(2)}`
}

/**
 * A pack holding one blob of `content`, and an index that lists it under `claimedId` (another
 * object's id): git, which searches packs before loose objects, then shows `content` for
 * `claimedId`. Both with valid checksums, so only recomputing the ids finds the forgery.
 */
export function packAliasing(
  claimedId: string,
  content: string,
  format: 'sha1' | 'sha256' = 'sha1',
): { name: string; pack: Buffer; index: Buffer } {
  const body = Buffer.from(content)
  // Object header: type 3 (blob) and the size, 4 bits then 7 bits a byte.
  const header: number[] = []
  let size = body.byteLength
  let byte = (3 << 4) | (size & 0x0f)
  size >>= 4
  while (size > 0) {
    header.push(byte | 0x80)
    byte = size & 0x7f
    size >>= 7
  }
  header.push(byte)
  const entry = Buffer.concat([Buffer.from(header), deflateSync(body)])
  const start = Buffer.alloc(12)
  start.write('PACK', 0, 'latin1')
  start.writeUInt32BE(2, 4)
  start.writeUInt32BE(1, 8)
  const unsigned = Buffer.concat([start, entry])
  const packChecksum = hashOf(format, unsigned)
  const pack = Buffer.concat([unsigned, packChecksum])
  const id = Buffer.from(claimedId, 'hex')
  const fanout = Buffer.alloc(256 * 4)
  for (let value = 0; value < 256; value++)
    fanout.writeUInt32BE(value >= (id[0] as number) ? 1 : 0, value * 4)
  const crc = Buffer.alloc(4)
  crc.writeUInt32BE(crc32(entry) >>> 0)
  const offset = Buffer.alloc(4)
  offset.writeUInt32BE(12)
  const indexHeader = Buffer.from([0xff, 0x74, 0x4f, 0x63, 0, 0, 0, 2])
  const indexBody = Buffer.concat([indexHeader, fanout, id, crc, offset, packChecksum])
  const index = Buffer.concat([indexBody, hashOf(format, indexBody)])
  return { name: `pack-${packChecksum.toString('hex')}`, pack, index }
}

/**
 * A commit graph like `graph` (a real one, of `format`) whose commits have no parents: git
 * believes it over the commits themselves, so history before them looks unreachable.
 */
export function graphWithoutParents(graph: Buffer, format: 'sha1' | 'sha256' = 'sha1'): Buffer {
  const forged = Buffer.from(graph)
  const hashBytes = format === 'sha1' ? 20 : 32
  const chunks = forged.readUInt8(6)
  let data: { offset: number; end: number } | undefined
  for (let chunk = 0; chunk < chunks; chunk++) {
    const at = 8 + chunk * 12
    if (forged.toString('latin1', at, at + 4) !== 'CDAT') continue
    data = {
      offset: Number(forged.readBigUInt64BE(at + 4)),
      end: Number(forged.readBigUInt64BE(at + 16)),
    }
  }
  if (data === undefined) throw new Error('no commit data chunk in the commit graph')
  const record = hashBytes + 16
  for (let at = data.offset; at < data.end; at += record) {
    // GRAPH_PARENT_NONE in both parent positions.
    forged.writeUInt32BE(0x70000000, at + hashBytes)
    forged.writeUInt32BE(0x70000000, at + hashBytes + 4)
  }
  hashOf(format, forged.subarray(0, forged.byteLength - hashBytes)).copy(
    forged,
    forged.byteLength - hashBytes,
  )
  return forged
}

/** How many commits git says `rev` reaches in `folder`. */
export function commitCount(folder: string, rev: string): number {
  const run = git(folder, ['rev-list', '--count', rev])
  return run.status === 0 ? Number(run.stdout.trim()) : 0
}

/** `git cat-file -p` of `id` in `folder` (or its error). */
export function showObject(folder: string, id: string): string {
  const run = git(folder, ['cat-file', '-p', id])
  return run.status === 0 ? run.stdout : `error: ${run.stderr.trim()}`
}

/** Runs git with a plain exec (for setup that must succeed). */
export function gitSetup(folder: string, script: string): void {
  execFileSync('/bin/bash', ['-c', script], { cwd: folder, env: GIT_TEST_ENV, stdio: 'pipe' })
}
