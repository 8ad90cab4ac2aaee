/**
 * @module jail/write-back
 * The way back from a jail, whatever the command worked on (a mirror, or an overlay's upper
 * layer): the changes are judged by the one write-back plan (the path policy, permission bits,
 * links, sizes, new repositories, the history rules) and what passes is written through the
 * workspace view. The command's version is read from `source` through pinned folders only, a
 * piece at a time: no link a program planted is followed, and no file is held whole.
 */
import fs from 'node:fs'
import { EitriError } from '../errors/eitri-error.ts'
import { treeHistoryHost } from '../access/git-metadata/tree-history-host.ts'
import {
  DEFAULT_WRITE_BACK_LIMITS,
  linkTargetPath,
  planWriteBack,
  type PlannedChange,
  type ProposedChange,
  type WriteBackLimits,
  type WriteBackPlan,
} from '../access/write-back/plan-write-back.ts'
import type { ContentSource, WorkspaceView } from '../ports/workspace-view.ts'
import type { WorkspaceTree } from '../workspace/workspace-tree.ts'
import { atPinned, READ_FLAGS } from './pinned-folder.ts'

/** What a sync back to the host did. */
export interface SyncReport {
  readonly written: string[]
  readonly deleted: string[]
  /** Changes the policy refused; the jail's copy is restored to the host's version of each. */
  readonly refused: { path: string; reason: string }[]
  /**
   * Not brought back on purpose, reported, not a failure: a repository a program made (it stays
   * in the jail), and files git derives and rebuilds (the workspace's version stays).
   */
  readonly kept: { path: string; reason: string }[]
  /**
   * A fork's files the jail could not show (a name too long for the host's file system):
   * programs did not see them, the fork still has them. Each is reported once.
   */
  readonly hidden?: { path: string; reason: string }[]
}

/** What one write-back did, for callers that keep a copy in step (the mirror). */
export interface WriteBackOutcome {
  readonly plan: WriteBackPlan
  /** Changes written (or deleted) on the host. */
  readonly applied: PlannedChange[]
  /** Changes the plan accepted but writing failed, with why. */
  readonly failed: { path: string; reason: string }[]
}

/** Judges `changes` and writes what passes; see the module comment. */
export async function writeBack(options: {
  /** The folder holding the command's version of each changed path. */
  readonly source: string
  readonly changes: readonly ProposedChange[]
  readonly tree: WorkspaceTree
  readonly view: WorkspaceView
  readonly limits?: WriteBackLimits
}): Promise<WriteBackOutcome> {
  const { source, view, tree } = options
  const limits = options.limits ?? DEFAULT_WRITE_BACK_LIMITS
  // A path the command also removed (a link it replaced by a folder or a file): the removal
  // goes first, so what is written lands at the name itself, never where the old link led (a
  // link to itself, `loop -> loop`, leads nowhere at all).
  const removed = new Set(
    options.changes.filter((change) => change.type === 'delete').map((change) => change.path),
  )
  const plan = await planWriteBack(options.changes, {
    decide: async (relative, change) => {
      try {
        await view.resolve(relative, 'write', {
          followFinal:
            change.type !== 'delete' && change.type !== 'symlink' && !removed.has(relative),
        })
        if (change.type === 'symlink') {
          await view.resolve(linkTargetPath(relative, change.target ?? ''), 'read')
        }
        return undefined
      } catch (error) {
        return reasonOf(error)
      }
    },
    host: treeHistoryHost(tree),
    proposal: {
      read: async (relative, maxBytes) => readPinned(source, relative, maxBytes),
      sameAsHost: async (relative) => sameContent(source, relative, tree),
    },
    limits,
  })
  const applied: PlannedChange[] = []
  const failed: { path: string; reason: string }[] = []
  for (const change of plan.apply) {
    try {
      if (change.type === 'delete') await view.remove(change.path)
      else await copyOut(source, change, view, limits)
      applied.push(change)
    } catch (error) {
      failed.push({ path: change.path, reason: reasonOf(error) })
    }
  }
  return { plan, applied, failed }
}

/** Writes one accepted change of the command's version to the host through the view. */
async function copyOut(
  source: string,
  change: PlannedChange,
  view: WorkspaceView,
  limits: WriteBackLimits,
): Promise<void> {
  const relative = change.path
  if (change.type === 'directory') {
    await view.makeFolder(relative)
  } else if (change.type === 'symlink') {
    await view.createSymlink(relative, change.target ?? '')
  } else if (change.type === 'file' && change.content !== undefined) {
    // Judged by content (inside a repository folder): these bytes, not the file read again.
    await view.writeFile(relative, change.content, { mode: change.mode })
  } else if (change.type === 'file') {
    // Opened once, without following a link, and copied a piece at a time: never whole in memory.
    const descriptor = atPinned(source, relative, (pinned) => fs.openSync(pinned, READ_FLAGS))
    try {
      const stat = fs.fstatSync(descriptor)
      if (!stat.isFile()) throw new Error(`${relative} is no longer a regular file`)
      if (stat.size > limits.maxFileBytes) {
        throw new EitriError(
          'quota_exceeded',
          `it grew past the ${limits.maxFileBytes} bytes a file may bring back from the jail`,
        )
      }
      const content: ContentSource = {
        size: stat.size,
        read: (buffer, position) => fs.readSync(descriptor, buffer, 0, buffer.byteLength, position),
      }
      await view.writeFile(relative, content, { mode: change.mode })
    } finally {
      fs.closeSync(descriptor)
    }
  }
}

/** A file of the command's version, at most `maxBytes` (undefined when larger or not a file). */
export function readPinned(root: string, relative: string, maxBytes: number): Buffer | undefined {
  return atPinned(root, relative, (source) => {
    const descriptor = fs.openSync(source, READ_FLAGS)
    try {
      const stat = fs.fstatSync(descriptor)
      if (!stat.isFile() || stat.size > maxBytes) return undefined
      const buffer = Buffer.alloc(stat.size)
      let filled = 0
      while (filled < stat.size) {
        const read = fs.readSync(descriptor, buffer, filled, stat.size - filled, filled)
        if (read === 0) break
        filled += read
      }
      return buffer.subarray(0, filled)
    } finally {
      fs.closeSync(descriptor)
    }
  })
}

/** Whether the command's file holds exactly what the host file holds. */
async function sameContent(root: string, relative: string, tree: WorkspaceTree): Promise<boolean> {
  const hostStat = await tree.stat(relative)
  if (hostStat?.type !== 'file' || hostStat.size > DEFAULT_WRITE_BACK_LIMITS.maxFileBytes)
    return false
  const host = Buffer.from(await tree.readFile(relative))
  const mirror = readPinned(root, relative, hostStat.size)
  return mirror !== undefined && mirror.equals(host)
}

/** A refusal's reason, from an error a policy or a write threw. */
export function reasonOf(error: unknown): string {
  if (EitriError.isInstance(error)) return error.message
  return `could not be written back: ${(error as NodeJS.ErrnoException).code ?? String(error)}`
}
