/**
 * @module jail/overlay/layer-write-back
 * Bringing back what one command changed, once its overlay is unmounted: the upper layer is
 * read (upper-layer.ts), what stays in the jail moves to the kept layer (kept-layer.ts), and
 * the rest is judged and written to the workspace (write-back.ts). One report says what was
 * written, deleted, refused and kept.
 *
 * Apart from the overlay workspace, which mounts and unmounts the layers: this is the part that
 * reads one and changes the workspace.
 */
import fs from 'node:fs'
import path from 'node:path'
import type { WriteBackLimits } from '../../access/write-back/plan-write-back.ts'
import type { WorkspaceView } from '../../ports/workspace-view.ts'
import type { WorkspaceTree } from '../../workspace/workspace-tree.ts'
import { ignoredPathsOf } from '../../workspace/ignored-paths.ts'
import { isWithinAny } from '../../util/relative-paths.ts'
import { writeBack, type SyncReport } from '../write-back.ts'
import type { KeptLayer } from './kept-layer.ts'
import { readUpperLayer } from './upper-layer.ts'

/** Brings back a command's upper layer `upper`; see the module comment. */
export async function writeBackLayer(options: {
  readonly upper: string
  /** When the layer was mounted, in the clock of file change times. */
  readonly startedMs: number
  readonly tree: WorkspaceTree
  readonly view: WorkspaceView
  readonly limits: WriteBackLimits | undefined
  /** Workspace-relative paths covered in every overlay: never written back. */
  readonly privatePaths: readonly string[]
  /** The workspace folder the overlay has below: the tree's root, or main's below a fork. */
  readonly workspace: string
  /** Whether the workspace is a fork (git's files and ignored files stay in its jail). */
  readonly forked: boolean
  readonly kept: KeptLayer
  /** The overlay's opaque mark of each folder (absolute paths), as the layer host reads it. */
  readonly opaque: (folders: readonly string[]) => Promise<boolean[]>
}): Promise<SyncReport> {
  const { upper, tree, privatePaths, workspace, kept } = options
  const isPrivate = (relative: string): boolean => isWithinAny(relative, privatePaths)
  const read = await readUpperLayer({
    upper,
    tree,
    isPrivate,
    startedMs: options.startedMs,
    // In a fork, git's files (main's repository, below) and what the fork's .gitignore files
    // ignore (build outputs, installed packages) stay in the fork's jail, as they stay out of
    // main's history: never a change of the fork's files, never merged.
    ...(options.forked
      ? { apart: (relative: string, stat: fs.Stats) => setApart(tree, relative, stat) }
      : {}),
    opaque: (relatives) => options.opaque(relatives.map((relative) => path.join(upper, relative))),
  })
  const report: SyncReport = { written: [], deleted: [], refused: [...read.refused], kept: [] }
  const below = (relative: string): boolean => fs.existsSync(path.join(workspace, relative))
  await kept.keepApart(upper, read.apart, below, report, workspace)
  if (read.changes.length === 0) return report
  const { plan, applied, failed } = await writeBack({
    source: upper,
    changes: read.changes,
    tree,
    view: options.view,
    ...(options.limits === undefined ? {} : { limits: options.limits }),
  })
  for (const change of applied) {
    if (change.type === 'delete') report.deleted.push(change.path)
    else report.written.push(change.path)
  }
  report.refused.push(...failed, ...plan.refused)
  // Repositories made in the jail, and derived files git rebuilds (a commit graph): not
  // written, not failures.
  const made = await kept.keepMade(upper, plan.kept, report)
  report.kept.push(...made, ...plan.dropped)
  return report
}

/** Whether a fork's command's write at `relative` stays in the fork's jail. */
async function setApart(tree: WorkspaceTree, relative: string, stat: fs.Stats): Promise<boolean> {
  if (relative.split('/').includes('.git')) return true
  // A file the fork tracks is the fork's, whatever the patterns say (as git judges it).
  if ((await tree.stat(relative)) !== undefined) return false
  return ignoredPathsOf(tree).isIgnored(relative, stat.isDirectory() ? 'directory' : 'file')
}
