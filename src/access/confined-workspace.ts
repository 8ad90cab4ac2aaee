/**
 * @module access/confined-workspace
 * The door every tool goes through to reach a workspace folder: each operation asks the path
 * policy first, then acts on the resolved path only.
 */
import nodePath from 'node:path'
import { EitriError } from '../errors/eitri-error.ts'
import { contentBytes, contentLength, isContentSource } from '../tool/file-content.ts'
import type {
  EntryStat,
  FileContent,
  WalkEntry,
  WalkOptions,
  WorkspaceView,
  WriteReceipt,
} from '../ports/workspace-view.ts'
import { ignoredPathsOf } from '../workspace/ignored-paths.ts'
import type { DirectoryEntry, WorkspaceTree } from '../workspace/workspace-tree.ts'
import {
  decidePath,
  WORKSPACE_MOUNT,
  type PathIntent,
  type PathPolicyOptions,
} from './path-policy.ts'
import { gitPlaceByName } from './git-metadata/git-place.ts'
import { judgeHistory, type HistoryChange, type MayWrite } from './git-metadata/history-rules.ts'
import type { ProgramPathSource } from './git-metadata/judge-git-write.ts'
import { contentProposal, treeHistoryHost } from './git-metadata/tree-history-host.ts'
import { protectedPathMatcher } from './protected-paths.ts'
import { MAIN_LINE } from '../ports/line-control.ts'
import { refusedText } from './refusal-text.ts'
import { lookupAfter, writeAllOrNothing } from './batch-write.ts'

/** What a confined view of a folder needs. */
export interface WorkspaceViewOptions {
  readonly tree: WorkspaceTree
  /** Host paths that name the root besides its real path (such as the path the user gave). */
  readonly aliases?: readonly string[]
  /** Extra protected patterns from the configuration, anchored at the workspace root. */
  readonly protectedPaths?: readonly string[]
  /** Host paths of eitri's own state and configuration; hidden if they lie inside the workspace. */
  readonly privatePaths?: readonly string[]
  /**
   * Workspace-relative paths hidden from every tool, resolved by the caller from the real paths
   * of eitri's state and configuration (a fork's tree has no host path to compare against).
   */
  readonly hiddenPaths?: readonly string[]
  /** The line's name. @default 'main' */
  readonly line?: string
  /** What the repositories' configuration names as code, protected like hooks (main's, for every line). */
  readonly programs?: ProgramPathSource
}

/**
 * Writes the access layer may make after a person approved them: a protected path (named by an
 * allow rule). Never handed to tools: the gated view keeps it to itself.
 */
export interface ExemptWrites {
  writeProtected(
    path: string,
    data: FileContent,
    options?: { mode?: number | undefined },
  ): Promise<WriteReceipt>
}

/** The key under which a confined workspace carries its exempt writes. */
export const EXEMPT_WRITES: unique symbol = Symbol('eitri.exemptWrites')

/** A workspace view with the writes only the access layer may use. */
export type ConfinedWorkspace = WorkspaceView & {
  /** @internal */
  readonly [EXEMPT_WRITES]: ExemptWrites
}

/** Folders `walk` never enters. */
const SKIPPED_FOLDERS = new Set(['.git'])

/**
 * Binds a folder to the path policy.
 *
 * @example
 * const view = createWorkspaceView({ tree: new DirectoryTree('/home/me/project') })
 * await view.readFile('README.md')
 */
export function createWorkspaceView(options: WorkspaceViewOptions): ConfinedWorkspace {
  const { tree } = options
  const hostRoots = unique([
    ...(tree.root === undefined ? [] : [tree.root]),
    ...(options.aliases ?? []),
  ])
  const byLengthDescending = [...hostRoots].sort((a, b) => b.length - a.length)
  const hidden = unique([
    ...(options.hiddenPaths ?? []),
    ...(options.privatePaths ?? []).flatMap((hostPath) => insideRoot(hostPath, hostRoots)),
  ])
  const policy: PathPolicyOptions = {
    lookup: tree,
    hostRoots,
    isProtected: protectedPathMatcher(options.protectedPaths),
    hidden,
    ...(options.programs === undefined ? {} : { programs: options.programs }),
    fork: options.line !== undefined && options.line !== MAIN_LINE,
  }
  const historyHost = treeHistoryHost(tree)
  /** The write policy for a path a checkout of a moved ref would write (links: their targets too). */
  const mayWrite: MayWrite = async (path, change) => {
    const followFinal = change.type !== 'delete' && change.type !== 'symlink'
    const decision = await decidePath(policy, path, 'write', { followFinal })
    if (decision.type === 'denied') return decision.reason
    if (change.type !== 'symlink') return undefined
    const folder = nodePath.posix.dirname(path)
    const target = change.target ?? ''
    const leads = await decidePath(policy, folder === '.' ? target : `${folder}/${target}`, 'read')
    return leads.type === 'denied' ? leads.reason : undefined
  }

  /**
   * The history rules for a change inside an existing repository folder (objects written once,
   * reflogs only growing, no ref lost). Answers true when the change would change nothing.
   */
  async function checkHistory(change: HistoryChange, data?: FileContent): Promise<boolean> {
    if (gitPlaceByName(change.path).type !== 'inside') return false
    const judgement = await judgeHistory(
      [change],
      historyHost,
      contentProposal(data ?? '', historyHost),
      { mayWrite },
    )
    const reason = judgement.refused.get(change.path) ?? judgement.dropped.get(change.path)
    if (reason !== undefined) throw new EitriError('protected_path', refusedText(reason))
    return judgement.unchanged.has(change.path)
  }

  async function resolve(path: string, intent: PathIntent, followFinal = true): Promise<string> {
    const decision = await decidePath(policy, path, intent, { followFinal })
    if (decision.type === 'denied')
      throw new EitriError(decision.code, refusedText(decision.reason))
    return decision.path
  }

  async function existingFile(path: string): Promise<string> {
    const resolved = await resolve(path, 'read')
    const stat = await tree.stat(resolved)
    if (stat === undefined)
      throw new EitriError('not_found', `File not found: ${display(resolved)}`)
    if (stat.type === 'directory') {
      throw new EitriError(
        'is_directory',
        `Path is a directory, not a file: ${display(resolved)}. Use glob to list what it holds.`,
      )
    }
    if (stat.type !== 'file') {
      // A FIFO or a device would block the read forever or never end.
      throw new EitriError(
        'not_found',
        `Not a regular file: ${display(resolved)} (a pipe, socket or device cannot be read as a file).`,
      )
    }
    return resolved
  }

  async function* walk(path: string, options: WalkOptions = {}): AsyncIterable<WalkEntry> {
    const start = await resolve(path, 'read')
    const stat = await tree.stat(start)
    if (stat === undefined) throw new EitriError('not_found', `Folder not found: ${display(start)}`)
    if (stat.type !== 'directory') {
      yield { path: start, type: stat.type }
      return
    }
    const ignored = options.gitignore === true ? ignoredPathsOf(tree).pass() : undefined
    const folders = [start]
    while (folders.length > 0) {
      options.signal?.throwIfAborted()
      const folder = folders.pop() as string
      const entries = await listBelow(tree, folder, start)
      const below: string[] = []
      await ignored?.load(
        folder,
        entries.some((entry) => entry.name === '.gitignore' && entry.type === 'file'),
      )
      for (const entry of entries) {
        const entryPath = folder === '' ? entry.name : `${folder}/${entry.name}`
        if (entry.type === 'directory' && SKIPPED_FOLDERS.has(entry.name)) continue
        if (hidden.some((secret) => entryPath === secret || entryPath.startsWith(`${secret}/`)))
          continue
        if (ignored?.ignored(entryPath, entry.type === 'directory') === true) continue
        const walked = { path: entryPath, type: entry.type }
        if (options.prune?.(walked) === true) continue
        yield walked
        if (entry.type === 'directory') below.push(entryPath)
      }
      folders.push(...below.reverse())
    }
  }

  const exemptWrites: ExemptWrites = {
    async writeProtected(path, data, writeOptions = {}) {
      // Resolved for reading: inside the workspace, links judged, protection not applied.
      const resolved = await resolve(path, 'read')
      return write(resolved, data, writeOptions.mode)
    },
  }

  async function write(
    resolved: string,
    data: FileContent,
    mode: number | undefined,
  ): Promise<WriteReceipt> {
    const bytes = typeof data === 'string' ? Buffer.from(data, 'utf8') : data
    // Permission bits only: a setuid or setgid bit would make the file run as its (host) owner.
    const { created } = await tree.writeFileAtomic(resolved, bytes, {
      mode: mode === undefined ? undefined : mode & 0o777,
    })
    return { path: resolved, bytes: contentLength(bytes), created }
  }
  return {
    [EXEMPT_WRITES]: exemptWrites,
    line: options.line ?? MAIN_LINE,
    resolve: (path, intent, resolveOptions = {}) =>
      resolve(path, intent, resolveOptions.followFinal ?? true),
    async readFile(path, readOptions = {}) {
      return tree.readFile(await existingFile(path), {
        range: readOptions.range,
        maxBytes: readOptions.maxBytes,
      })
    },
    async writeFile(path, data, options = {}): Promise<WriteReceipt> {
      const resolved = await resolve(path, 'write')
      // Inside a repository folder the content is judged: a source is read once, so the bytes
      // judged are the bytes written (its file may change between two reads).
      const content =
        gitPlaceByName(resolved).type === 'inside' && isContentSource(data)
          ? contentBytes(data)
          : data
      if (await checkHistory({ path: resolved, type: 'file' }, content)) {
        return { path: resolved, bytes: contentLength(content), created: false }
      }
      return write(resolved, content, options.mode)
    },
    async writeFiles(files) {
      const resolved: string[] = []
      for (const file of files) resolved.push(await resolve(file.path, 'write'))
      // Judged again as though the batch's other files were written: what the writes make
      // together (a repository from plain files) is refused before the first is written.
      for (const [index, path] of resolved.entries()) {
        const others = resolved.filter((_, other) => other !== index)
        const decision = await decidePath(
          { ...policy, lookup: lookupAfter(tree, others) },
          path,
          'write',
        )
        if (decision.type === 'denied')
          throw new EitriError(
            decision.code,
            refusedText(`${decision.reason}; nothing of this batch was written`),
          )
      }
      const contents = files.map((file, index) =>
        gitPlaceByName(resolved[index] as string).type === 'inside' && isContentSource(file.data)
          ? contentBytes(file.data)
          : file.data,
      )
      const unchanged = new Set<number>()
      for (const [index, path] of resolved.entries())
        if (await checkHistory({ path, type: 'file' }, contents[index])) unchanged.add(index)
      return writeAllOrNothing(tree, resolved, (index) => {
        const path = resolved[index] as string
        const content = contents[index] as FileContent
        return unchanged.has(index)
          ? Promise.resolve({ path, bytes: contentLength(content), created: false })
          : write(path, content, undefined)
      })
    },
    async makeFolder(path) {
      await tree.makeFolder(await resolve(path, 'write'))
    },
    async remove(path) {
      const resolved = await resolve(path, 'write', false)
      if (resolved === '')
        throw new EitriError(
          'invalid_input',
          'Refused: the workspace root itself cannot be removed.',
        )
      await checkHistory({ path: resolved, type: 'delete' })
      await tree.remove(resolved)
    },
    async createSymlink(path, target) {
      const resolved = await resolve(path, 'write', false)
      const folder = resolved.includes('/') ? resolved.slice(0, resolved.lastIndexOf('/')) : ''
      // An absolute link into the workspace would lead elsewhere on the host (the jail's
      // /workspace is not the host's): it is kept, written relative to the link's folder.
      const inside = target.startsWith('/')
        ? insideRoot(target, [...hostRoots, WORKSPACE_MOUNT]).map((rest) =>
            nodePath.posix.normalize(rest === '' ? '.' : rest),
          )
        : []
      // `/workspace/../etc` climbs out: it stays absolute, and is refused below.
      const written =
        inside[0] === undefined || inside[0] === '..' || inside[0].startsWith('../')
          ? target
          : nodePath.posix.relative(`/${folder}`, `/${inside[0] === '.' ? '' : inside[0]}`) || '.'
      const pointsTo = written.startsWith('/') || folder === '' ? written : `${folder}/${written}`
      const decision = await decidePath(policy, pointsTo, 'read')
      if (decision.type === 'denied' || written.startsWith('/')) {
        throw new EitriError(
          'path_outside_workspace',
          `Refused: the link ${resolved} would point to ${target}, outside the workspace.`,
        )
      }
      await checkHistory({ path: resolved, type: 'symlink' })
      await tree.createSymlink(resolved, written)
    },
    async stat(path): Promise<EntryStat | undefined> {
      return tree.stat(await resolve(path, 'read'))
    },
    walk,
    redact(text) {
      let redacted = text
      for (const root of byLengthDescending) redacted = redacted.replaceAll(root, WORKSPACE_MOUNT)
      return redacted
    },
  }
}

/**
 * A folder's entries for a walk. A folder below the start that the workspace's owner may not
 * read is passed over, as `find` passes over one it cannot open: its name was shown, never
 * what it holds. The start itself is refused.
 */
async function listBelow(
  tree: WorkspaceTree,
  folder: string,
  start: string,
): Promise<readonly DirectoryEntry[]> {
  try {
    return await tree.list(folder)
  } catch (error) {
    if (folder !== start && EitriError.isInstance(error) && error.code === 'permission_denied')
      return []
    throw error
  }
}

function display(path: string): string {
  return path === '' ? '.' : path
}

function insideRoot(hostPath: string, roots: readonly string[]): string[] {
  for (const root of roots) {
    if (hostPath === root) return ['']
    if (hostPath.startsWith(`${root}/`)) return [hostPath.slice(root.length + 1)]
  }
  return []
}

function unique(values: readonly string[]): string[] {
  return [
    ...new Set(
      values.map((value) => (value.length > 1 && value.endsWith('/') ? value.slice(0, -1) : value)),
    ),
  ]
}
