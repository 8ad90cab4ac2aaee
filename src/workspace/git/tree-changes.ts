/**
 * @module workspace/git/tree-changes
 * What checking out one commit over another would write: the paths whose entries differ
 * between two trees (`git diff-tree -r`), with the new entry's mode and, for a link, its
 * target. git runs on a scratch repository of eitri's own (its configuration, no hooks); it
 * reads the user's object store through `GIT_OBJECT_DIRECTORY`, and objects that are not
 * written yet (already checked: loose objects hash to their names, packs were verified) from a
 * scratch folder named as an alternate. Nothing is written to the user's repository.
 */
import fs from 'node:fs/promises'
import path from 'node:path'
import { withScratchRepository } from './object-checks.ts'
import type { ObjectFormat } from './object-format.ts'
import { runGit } from './run-git.ts'

/** The empty tree of each format: what a ref that did not exist checked out. */
export const EMPTY_TREE: Readonly<Record<ObjectFormat, string>> = Object.freeze({
  sha1: '4b825dc642cb6eb9a060e54bf8d69288fbee4904',
  sha256: '6ef19b41225c5369f1c104d45d8d85efa9b057b53b14b4b9b939dd74decc5321',
})

/** Two trees (or commits, or tags of them) to compare; no `from` is the empty tree. */
export interface TreeComparison {
  readonly from?: string
  readonly to: string
}

/** One path whose entry differs. */
export interface TreeEntryChange {
  /** Relative to the work tree, `/`-separated. */
  readonly path: string
  readonly status: 'added' | 'modified' | 'deleted'
  /** The new entry's mode as git writes it (`100644`, `100755`, `120000`, `160000`); `000000` when deleted. */
  readonly mode: string
  /** For a new or changed link: its target. */
  readonly target?: string
}

/** The changes of one comparison, or why git could not give them. */
export type TreeChanges =
  | { readonly ok: true; readonly changes: readonly TreeEntryChange[] }
  | { readonly ok: false; readonly reason: string }

/** An object file not in the store yet: its path below `objects/` and its bytes. */
export interface StagedObject {
  readonly inner: string
  readonly bytes: Uint8Array
}

/** Bounds of one comparison. */
export interface TreeChangeLimits {
  /** Paths one comparison may change before it is too large to judge. @default 20000 */
  readonly maxPaths?: number
}

const DEFAULT_MAX_PATHS = 20_000
/** git's output for one comparison: a path is rarely longer than a few hundred bytes. */
const MAX_DIFF_BYTES_PER_PATH = 512
/** Comparing two trees takes milliseconds; a stuck one is not waited for. */
const DIFF_TIMEOUT_MS = 30_000
/** A link's target is a path: at most PATH_MAX bytes. */
const MAX_LINK_BYTES = 4096
const LINK_MODE = '120000'
/** A commit's header and message: a stash's are a few hundred bytes. */
const MAX_COMMIT_BYTES = 64 * 1024

/**
 * The changes of each comparison, in order, read from the object store at `objectsFolder` (a
 * host path) and the `staged` objects. Without a folder there is no repository to read: every
 * comparison fails.
 */
export async function treeChanges(
  objectsFolder: string | undefined,
  staged: readonly StagedObject[],
  comparisons: readonly TreeComparison[],
  format: ObjectFormat,
  limits: TreeChangeLimits = {},
): Promise<TreeChanges[]> {
  if (comparisons.length === 0) return []
  if (objectsFolder === undefined) {
    return comparisons.map(() => ({
      ok: false,
      reason: 'this copy of the workspace holds no repository git can read',
    }))
  }
  const maxPaths = limits.maxPaths ?? DEFAULT_MAX_PATHS
  return withObjects(objectsFolder, staged, format, async (gitDir, env) => {
    // A ref may lead to a blob (a tag of a key): nothing of it is checked out.
    const types = await peeledTypes(gitDir, env, [
      ...new Set(comparisons.flatMap(({ from, to }) => (from === undefined ? [to] : [from, to]))),
    ])
    const results: TreeChanges[] = []
    for (const { from, to } of comparisons) {
      if (types.get(to) === 'blob') {
        results.push({ ok: true, changes: [] })
        continue
      }
      const old = from === undefined || types.get(from) === 'blob' ? EMPTY_TREE[format] : from
      const output = await runGit(
        { gitDir },
        ['diff-tree', '-r', '-z', '--no-renames', '--full-index', old, to],
        {
          env,
          check: false,
          timeoutMs: DIFF_TIMEOUT_MS,
          maxStdoutBytes: maxPaths * MAX_DIFF_BYTES_PER_PATH,
        },
      )
      if (output.overflowed === true) {
        results.push({ ok: false, reason: 'it changes too many paths to judge' })
        continue
      }
      if (output.status !== 0) {
        const said = output.stderr.trim().split('\n').at(-1)?.slice(0, 200) ?? ''
        results.push({
          ok: false,
          reason:
            output.status === -1
              ? `git could not compare its tree within ${DIFF_TIMEOUT_MS / 1000} s`
              : `git could not read it as a commit or tree${said === '' ? '' : ` (${said})`}`,
        })
        continue
      }
      const parsed = parseRawDiff(output.stdout)
      if (typeof parsed === 'string') {
        results.push({ ok: false, reason: parsed })
        continue
      }
      if (parsed.length > maxPaths) {
        results.push({
          ok: false,
          reason: `it changes ${parsed.length} paths, more than the ${maxPaths} judged at once`,
        })
        continue
      }
      const linkIds = parsed.filter((change) => change.mode === LINK_MODE).map(({ id }) => id)
      const targets =
        linkIds.length === 0 ? new Map<string, string>() : await linkTargets(gitDir, env, linkIds)
      if (targets === undefined) {
        results.push({ ok: false, reason: 'git could not read the targets of its links' })
        continue
      }
      results.push({
        ok: true,
        changes: parsed.map(({ id, ...change }) =>
          change.mode === LINK_MODE ? { ...change, target: targets.get(id) ?? '' } : change,
        ),
      })
    }
    return results
  })
}

/**
 * The ids each of `commits` names as its parents, in order, read from the object store at
 * `objectsFolder` and the `staged` objects; undefined when git cannot read them all as commits.
 */
export async function commitParents(
  objectsFolder: string | undefined,
  staged: readonly StagedObject[],
  commits: readonly string[],
  format: ObjectFormat,
): Promise<Map<string, string[]> | undefined> {
  const wanted = [...new Set(commits)]
  if (wanted.length === 0) return new Map()
  if (objectsFolder === undefined || !wanted.every((id) => /^[0-9a-f]+$/.test(id))) return undefined
  return withObjects(objectsFolder, staged, format, async (gitDir, env) => {
    const output = await runGit({ gitDir }, ['cat-file', '--batch'], {
      input: `${wanted.join('\n')}\n`,
      env,
      check: false,
      timeoutMs: DIFF_TIMEOUT_MS,
      maxStdoutBytes: wanted.length * MAX_COMMIT_BYTES,
    })
    if (output.status !== 0) return undefined
    const parents = new Map<string, string[]>()
    let offset = 0
    for (const id of wanted) {
      const end = output.stdout.indexOf(0x0a, offset)
      if (end === -1) return undefined
      const header = /^([0-9a-f]+) commit (\d+)$/.exec(
        output.stdout.toString('latin1', offset, end),
      )
      if (header?.[1] !== id) return undefined
      const size = Number(header[2])
      const body = output.stdout.toString('latin1', end + 1, end + 1 + size)
      // The header ends at the first empty line; parents follow the tree, one a line.
      const lines = body.slice(0, body.indexOf('\n\n') === -1 ? body.length : body.indexOf('\n\n'))
      parents.set(
        id,
        lines
          .split('\n')
          .filter((line) => line.startsWith('parent '))
          .map((line) => line.slice('parent '.length)),
      )
      offset = end + 1 + size + 1
    }
    return parents
  })
}

/**
 * The targets of the links `ids` (blobs), read from the object store at `objectsFolder` and
 * the `staged` objects; undefined when git cannot read them all as links.
 */
export async function linkTargetsIn(
  objectsFolder: string | undefined,
  staged: readonly StagedObject[],
  ids: readonly string[],
  format: ObjectFormat,
): Promise<Map<string, string> | undefined> {
  if (ids.length === 0) return new Map()
  if (objectsFolder === undefined || !ids.every((id) => /^[0-9a-f]+$/.test(id))) return undefined
  return withObjects(objectsFolder, staged, format, (gitDir, env) => linkTargets(gitDir, env, ids))
}

/**
 * Runs `work` on a scratch repository that reads the object store at `objectsFolder` and, as
 * an alternate, the `staged` objects (written to a scratch folder of its own).
 */
async function withObjects<T>(
  objectsFolder: string,
  staged: readonly StagedObject[],
  format: ObjectFormat,
  work: (gitDir: string, env: Record<string, string>) => Promise<T>,
): Promise<T> {
  return withScratchRepository(format, async ({ gitDir }) => {
    const alternate = path.join(gitDir, 'staged')
    for (const object of staged) {
      if (!isObjectFileName(object.inner)) continue
      const target = path.join(alternate, object.inner)
      await fs.mkdir(path.dirname(target), { recursive: true })
      await fs.writeFile(target, object.bytes, { mode: 0o600 })
    }
    return work(gitDir, {
      GIT_OBJECT_DIRECTORY: objectsFolder,
      ...(staged.length === 0 ? {} : { GIT_ALTERNATE_OBJECT_DIRECTORIES: alternate }),
    })
  })
}

/** A name below `objects/` that git reads as a loose object or a pack file, and nothing else. */
function isObjectFileName(inner: string): boolean {
  return (
    /^[0-9a-f]{2}\/(?:[0-9a-f]{38}|[0-9a-f]{62})$/.test(inner) ||
    /^pack\/[A-Za-z0-9._-]+\.(?:pack|idx)$/.test(inner)
  )
}

/**
 * The records of `git diff-tree -r -z` raw output: `:<old mode> <new mode> <old id> <new id>
 * <status>` NUL `<path>` NUL. A string when the output is not that.
 */
function parseRawDiff(output: Buffer): (TreeEntryChange & { id: string })[] | string {
  const fields = output.toString('latin1').split('\0')
  if (fields.at(-1) === '') fields.pop()
  const changes: (TreeEntryChange & { id: string })[] = []
  for (let index = 0; index < fields.length; index += 2) {
    const meta = /^:(\d{6}) (\d{6}) [0-9a-f]+ ([0-9a-f]+) ([AMDT])$/.exec(fields[index] ?? '')
    const raw = fields[index + 1]
    if (meta === null || raw === undefined) return 'git answered what is not a list of changes'
    const name = Buffer.from(raw, 'latin1')
    const decoded = name.toString('utf8')
    if (!Buffer.from(decoded, 'utf8').equals(name)) {
      return `it holds a path that is not valid UTF-8 (${JSON.stringify(decoded)}), which cannot be judged`
    }
    const [, , mode = '', id = '', status = ''] = meta
    changes.push({
      path: decoded,
      status: status === 'A' ? 'added' : status === 'D' ? 'deleted' : 'modified',
      mode,
      id,
    })
  }
  return changes
}

/**
 * The type of the object each of `ids` leads to once tags are peeled (`commit`, `tree`, `blob`),
 * as `git cat-file --batch-check` tells; an id git cannot read is left out.
 */
async function peeledTypes(
  gitDir: string,
  env: Record<string, string>,
  ids: readonly string[],
): Promise<Map<string, string>> {
  const types = new Map<string, string>()
  const valid = ids.filter((id) => /^[0-9a-f]+$/.test(id))
  if (valid.length === 0) return types
  const output = await runGit({ gitDir }, ['cat-file', '--batch-check=%(objecttype)'], {
    input: `${valid.map((id) => `${id}^{}`).join('\n')}\n`,
    env,
    check: false,
    timeoutMs: DIFF_TIMEOUT_MS,
    maxStdoutBytes: valid.length * 128,
  })
  if (output.status !== 0) return types
  const lines = output.stdout.toString('latin1').split('\n')
  valid.forEach((id, index) => {
    const type = lines[index]
    if (type === 'commit' || type === 'tree' || type === 'blob') types.set(id, type)
  })
  return types
}

/** The targets of the links `ids` (blobs), as `git cat-file --batch` gives them. */
async function linkTargets(
  gitDir: string,
  env: Record<string, string>,
  ids: readonly string[],
): Promise<Map<string, string> | undefined> {
  const wanted = [...new Set(ids)]
  const output = await runGit({ gitDir }, ['cat-file', '--batch'], {
    input: `${wanted.join('\n')}\n`,
    env,
    check: false,
    timeoutMs: DIFF_TIMEOUT_MS,
    maxStdoutBytes: wanted.length * (MAX_LINK_BYTES + 128),
  })
  if (output.status !== 0) return undefined
  const targets = new Map<string, string>()
  let offset = 0
  for (const id of wanted) {
    const end = output.stdout.indexOf(0x0a, offset)
    if (end === -1) return undefined
    const header = /^([0-9a-f]+) blob (\d+)$/.exec(output.stdout.toString('latin1', offset, end))
    if (header?.[1] !== id) return undefined
    const size = Number(header[2])
    if (size > MAX_LINK_BYTES) return undefined
    targets.set(id, output.stdout.toString('utf8', end + 1, end + 1 + size))
    offset = end + 1 + size + 1
  }
  return targets
}
