/**
 * @module access/write-back/plan-write-back
 * What may come back from a jail: one function over the list of what a command changed,
 * whatever found the changes (a mirror compared with the workspace, or an overlay's upper
 * layer). Each change passes the one path policy; only permission bits come back (never
 * setuid, setgid or sticky); links must lead inside the workspace on the host too (a link to
 * the jail's `/workspace/…` is written relative); files are bounded by apparent size, per file
 * and per command; a repository a program made (a test suite's `git init`) stays in the jail;
 * an existing repository's history only grows. It decides; it writes nothing, and what it
 * judged by content it hands over as bytes (`content`), so the caller writes what was judged.
 * Permission bits come back without group or other write (decision 0032).
 */
import path from 'node:path'
import { gitPlaceByName } from '../git-metadata/git-place.ts'
import {
  judgeHistory,
  type HistoryHost,
  type HistoryProposal,
} from '../git-metadata/history-rules.ts'
import { isWithin as within } from '../../util/relative-paths.ts'

/** One change a command made, as found in its copy of the workspace. */
export interface ProposedChange {
  /** Workspace-relative, `/`-separated. */
  readonly path: string
  readonly type: 'file' | 'directory' | 'symlink' | 'delete'
  /** A file's mode as the program left it. */
  readonly mode?: number
  /** A file's apparent size (a sparse file counts whole). */
  readonly size?: number
  /** A link's target as written. */
  readonly target?: string
}

/** Bounds on what comes back from one command. */
export interface WriteBackLimits {
  /** The largest file, by apparent size. */
  readonly maxFileBytes: number
  /** All files of one command together, by apparent size. */
  readonly maxTotalBytes: number
  /**
   * All a fork's kept layer holds (its commands' ignored outputs and git's files), by allocated
   * size: it outlives the commands on the host's disk. Default {@link DEFAULT_MAX_KEPT_BYTES}.
   */
  readonly maxKeptBytes?: number
}

/** 4 GiB: a large `node_modules` and a build or two, not the host's disk. */
export const DEFAULT_MAX_KEPT_BYTES = 4 * 1024 * 1024 * 1024

/** 64 MiB per file, 256 MiB per command. */
export const DEFAULT_WRITE_BACK_LIMITS: WriteBackLimits = Object.freeze({
  maxFileBytes: 64 * 1024 * 1024,
  maxTotalBytes: 256 * 1024 * 1024,
})

/** What the planner reads and asks. */
export interface WriteBackContext {
  /** The path policy for writing `path` (a removal or a link judged as itself): why not, or undefined. */
  readonly decide: (path: string, change: ProposedChange) => Promise<string | undefined>
  /** The workspace as it is before the changes. */
  readonly host: HistoryHost
  /** The command's version of changed files. */
  readonly proposal: HistoryProposal
  readonly limits?: WriteBackLimits
  /** Where programs saw the workspace. @default '/workspace' */
  readonly mount?: string
}

/** A change with what is decided about it. */
export interface PlannedChange extends ProposedChange {
  /** Permission bits only, for a file. */
  readonly mode?: number
  /** For a link: the target to write (relative when the program wrote a `/workspace/…` path). */
  readonly target?: string
  /**
   * For a file inside an existing repository folder: the bytes the history rules judged. The
   * caller writes exactly these, never the file read again (a program may have changed it).
   */
  readonly content?: Uint8Array
}

/** A path and why it does not come back. */
export interface NotWritten {
  readonly path: string
  readonly reason: string
}

/** The plan: what to write, in order, and what not. */
export interface WriteBackPlan {
  /** Folders first (parents before children), then files and links, then removals (children first). */
  readonly apply: readonly PlannedChange[]
  /** Refused changes: the caller restores the workspace's version where the program works. */
  readonly refused: readonly NotWritten[]
  /** Left in the jail on purpose, reported once each and not as a failure (a repository made there). */
  readonly kept: readonly NotWritten[]
  /**
   * Files git derives and rebuilds (commit graphs, multi-pack indexes, bitmaps): never written,
   * not a failure. The caller restores the workspace's version where the program works.
   */
  readonly dropped: readonly NotWritten[]
  /** Changes that would change nothing (an object written again, identical). */
  readonly unchanged: readonly string[]
}

/**
 * Plans the write-back of `changes`.
 *
 * @example
 * const plan = await planWriteBack(changes, { decide, host, proposal })
 * for (const change of plan.apply) await writeThroughTheView(change)
 */
export async function planWriteBack(
  changes: readonly ProposedChange[],
  context: WriteBackContext,
): Promise<WriteBackPlan> {
  const limits = context.limits ?? DEFAULT_WRITE_BACK_LIMITS
  const mount = context.mount ?? '/workspace'
  const refused: NotWritten[] = []
  const kept: NotWritten[] = []
  const newRepositories = await repositoriesMade(changes, context.host)
  for (const repository of newRepositories) {
    kept.push({
      path: repository,
      reason:
        'a repository the command made; it works in the jail but is not written back (git would run code from its configuration)',
    })
  }
  const candidates: PlannedChange[] = []
  let totalBytes = 0
  // In path order, so which files pass the command's bound does not depend on how they were found.
  const byPath = [...changes].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0))
  for (const change of byPath) {
    if (newRepositories.some((repository) => within(change.path, repository))) continue
    const planned = sanitize(change, mount)
    if (typeof planned === 'string') {
      refused.push({ path: change.path, reason: planned })
      continue
    }
    const policy = await context.decide(change.path, planned)
    if (policy !== undefined) {
      refused.push({ path: change.path, reason: policy })
      continue
    }
    if (planned.type === 'file') {
      const size = planned.size ?? 0
      if (size > limits.maxFileBytes) {
        refused.push({
          path: change.path,
          reason: `it is ${formatBytes(size)} (apparent size), over the ${formatBytes(limits.maxFileBytes)} a file may bring back from the jail`,
        })
        continue
      }
      if (totalBytes + size > limits.maxTotalBytes) {
        refused.push({
          path: change.path,
          reason: `the command's files pass ${formatBytes(limits.maxTotalBytes)} together (apparent size), the most one command brings back from the jail`,
        })
        continue
      }
      totalBytes += size
    }
    candidates.push(planned)
  }
  const history = await judgeHistory(candidates, context.host, context.proposal, {
    // A ref may not lead to a commit whose checkout writes what the command may not write.
    mayWrite: (path, change) => context.decide(path, change),
    maxFileBytes: limits.maxFileBytes,
  })
  for (const [changed, reason] of history.refused) refused.push({ path: changed, reason })
  const accepted = candidates
    .filter(
      (change) =>
        !history.refused.has(change.path) &&
        !history.unchanged.has(change.path) &&
        !history.dropped.has(change.path),
    )
    .map((change) => {
      const content = history.contents.get(change.path)
      return content === undefined ? change : { ...change, content }
    })
  return {
    apply: ordered(accepted),
    refused,
    kept,
    dropped: [...history.dropped].map(([changed, reason]) => ({ path: changed, reason })),
    unchanged: [...history.unchanged],
  }
}

/**
 * The permission bits a file brings back (decision 0032): read and run for everyone, write for
 * its owner only. Never setuid, setgid or sticky; never writable by the host's other users or
 * its group, who could then change a script or source file the person runs next (a jailed
 * `chmod -R 777` would hand every local account the project). Folders are made with the host's
 * own default mode anyway.
 */
const RETURNED_BITS = 0o755

/** Strips what may never come back and rewrites links into the jail's mount; a string is a refusal. */
function sanitize(change: ProposedChange, mount: string): PlannedChange | string {
  if (change.type === 'file') return { ...change, mode: (change.mode ?? 0o644) & RETURNED_BITS }
  if (change.type !== 'symlink') return change
  const target = change.target ?? ''
  if (!target.startsWith('/')) return change
  if (target !== mount && !target.startsWith(`${mount}/`)) {
    return `it is a link to ${target}, outside the workspace (links that come back must lead inside it)`
  }
  const rest = path.posix.normalize(target.slice(mount.length + 1) || '.')
  if (rest === '..' || rest.startsWith('../')) {
    return `it is a link to ${target}, which climbs out of the workspace (links that come back must lead inside it)`
  }
  const folder = path.posix.dirname(`/${change.path}`)
  return { ...change, target: path.posix.relative(folder, rest === '.' ? '/' : `/${rest}`) || '.' }
}

/**
 * Folders that are repositories after the changes and were none before: a `.git` folder or
 * file that did not exist, or a folder completed into one git would use (`HEAD` beside
 * `objects` and `refs`, or beside `commondir`).
 */
async function repositoriesMade(
  changes: readonly ProposedChange[],
  host: HistoryHost,
): Promise<string[]> {
  const made = new Set<string>()
  const written = changes.filter((c) => c.type !== 'delete').map((c) => c.path)
  const deleted = new Set(changes.filter((c) => c.type === 'delete').map((c) => c.path))
  const markerFolders = new Set<string>()
  for (const change of changes) {
    if (change.type === 'delete') continue
    const place = gitPlaceByName(change.path)
    if (place.type !== 'none' && (await host.kind(place.gitDir)) !== 'directory') {
      // A .git that was a file on the host is the host's; replacing it is the policy's to refuse.
      if ((await host.kind(place.gitDir)) === undefined) made.add(place.gitDir)
      continue
    }
    // Every folder on the path that gains a marker (`HEAD`, `objects`, `refs`, `commondir`),
    // named itself or implied by a path below it (`src/objects/info/alternates`). The root is
    // left to the path policy; an existing repository folder is its own rule's.
    const components = change.path.split('/')
    for (let index = 1; index < components.length; index++) {
      if (!MARKERS.includes(components[index] as string)) continue
      const folder = components.slice(0, index).join('/')
      if (
        place.type === 'inside' &&
        (folder === place.gitDir || !folder.startsWith(`${place.gitDir}/`))
      )
        continue
      markerFolders.add(folder)
    }
  }
  for (const folder of markerFolders) {
    const at = (name: string): string => `${folder}/${name}`
    const before = async (name: string): Promise<boolean> =>
      (await host.kind(at(name))) !== undefined
    const after = async (name: string): Promise<boolean> =>
      written.some((path) => path === at(name) || path.startsWith(`${at(name)}/`)) ||
      (!deleted.has(at(name)) && (await before(name)))
    const was =
      (await before('HEAD')) &&
      ((await before('commondir')) || ((await before('objects')) && (await before('refs'))))
    const is =
      (await after('HEAD')) &&
      ((await after('commondir')) || ((await after('objects')) && (await after('refs'))))
    if (is && !was) made.add(folder)
  }
  // The outermost only: a repository inside a new one is part of it.
  return [...made]
    .sort((a, b) => a.length - b.length)
    .filter(
      (repository, index, all) => !all.slice(0, index).some((outer) => within(repository, outer)),
    )
}

/** The entries that make a folder a repository git would use. */
const MARKERS = ['HEAD', 'objects', 'refs', 'commondir']

/**
 * What a link at `linkPath` pointing to `target` names, for the path policy to resolve for
 * reading: relative targets are taken from the link's folder.
 */
export function linkTargetPath(linkPath: string, target: string): string {
  if (target.startsWith('/')) return target
  const folder = path.posix.dirname(linkPath)
  return folder === '.' ? target : `${folder}/${target}`
}

/**
 * Folders (shallow first), then files and links — a repository's objects before the refs and
 * `HEAD` that may point at them, since each write is judged again against what is there — then
 * removals (deep first).
 */
function ordered(changes: readonly PlannedChange[]): PlannedChange[] {
  const depth = (change: PlannedChange): number => change.path.split('/').length
  const folders = changes.filter((c) => c.type === 'directory').sort((a, b) => depth(a) - depth(b))
  const isObject = (change: PlannedChange): boolean => {
    const place = gitPlaceByName(change.path)
    return place.type === 'inside' && place.inner.startsWith('objects/')
  }
  const entries = changes
    .filter((c) => c.type === 'file' || c.type === 'symlink')
    .sort((a, b) => Number(isObject(b)) - Number(isObject(a)))
  const removals = changes.filter((c) => c.type === 'delete').sort((a, b) => depth(b) - depth(a))
  // Removals first: a folder replaced by a file (or a file by a folder) goes before its successor.
  return [...removals, ...folders, ...entries]
}

/** A size as people read it (`1.5 GiB`, `12 MiB`, `3 KiB`, `10 bytes`). */
export function formatBytes(bytes: number): string {
  if (bytes >= 1024 ** 3) return `${(bytes / 1024 ** 3).toFixed(1)} GiB`
  if (bytes >= 1024 ** 2) return `${Math.round(bytes / 1024 ** 2)} MiB`
  if (bytes >= 1024) return `${Math.round(bytes / 1024)} KiB`
  return `${bytes} bytes`
}
