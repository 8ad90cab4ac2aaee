/**
 * @module tools/workspace/snapshot-tools
 * The snapshots of main as tools: list them, and restore one (files and the user's git
 * references), with a person's approval. Every call that may change main is preceded by a
 * snapshot, so whatever an agent did there can be put back.
 */
import { z } from 'zod'
import { defineTool } from '../../tool/define-tool.ts'
import {
  isListedSnapshot,
  MAIN_LINE,
  type RestoredRef,
  type SnapshotInfo,
} from '../../ports/line-control.ts'
import { toolError, toolSuccess } from '../../tool/tool-result.ts'
import { linesOf } from './lines-of.ts'
import { visibleText } from '../../access/visible-text.ts'

/** How many snapshots `workspace_snapshots` lists by default. */
const DEFAULT_LISTED = 30

/** One line for a snapshot (a person reads it in `eitri log`: a command's escapes are shown as such). */
export function describeSnapshot(snapshot: SnapshotInfo): string {
  const call = snapshot.call
  const what =
    snapshot.kind === 'open' || call === undefined
      ? 'changes made outside eitri calls'
      : `${snapshot.kind} ${call.tool}${call.detail === undefined ? '' : `: ${visibleText(call.detail)}`}`
  const session = call?.session === undefined ? '' : ` (session ${call.session})`
  const skipped = snapshot.skippedCount === 0 ? '' : ` [${snapshot.skippedCount} path(s) left out]`
  return `#${snapshot.id}  ${snapshot.time}  ${what}${session}${skipped}`
}

/** Lists the snapshots of main. */
export const workspaceSnapshotsTool = defineTool({
  name: 'workspace_snapshots',
  description:
    'List the snapshots of main (the user’s live folder), newest first: one is taken before every call that may change main, named by the call that followed (tool, command or path, session). Restore one with workspace_restore.',
  parameters: z.object({
    limit: z
      .number()
      .int()
      .positive()
      .max(1000)
      .optional()
      .describe(`How many to list. Default ${DEFAULT_LISTED}.`),
  }),
  async execute({ limit = DEFAULT_LISTED }, ctx) {
    const snapshots = (await linesOf(ctx).snapshots()).filter(isListedSnapshot).slice(0, limit)
    return toolSuccess(
      snapshots.length === 0 ? 'No snapshots yet.' : snapshots.map(describeSnapshot).join('\n'),
      { snapshots: snapshots.map(({ id, kind, time, call }) => ({ id, kind, time, call })) },
    )
  },
})

/** Restores main (or some paths) as it was at a snapshot. */
export const workspaceRestoreTool = defineTool({
  name: 'workspace_restore',
  description:
    'Put main’s files (or only paths) back as they were at a snapshot (from workspace_snapshots), and with the whole snapshot the user’s git branches too. Only with a person’s approval. Files a person changed since the snapshot are refused, with the list, unless force. A restore is itself undoable: a snapshot is taken just before it.',
  parameters: z.object({
    snapshot: z
      .union([z.number().int().positive(), z.string().min(1)])
      .describe('The snapshot: its number (12 or "#12") or a prefix of its commit.'),
    paths: z
      .array(z.string().min(1))
      .max(1000)
      .optional()
      .describe('Restore only these files or folders (workspace-relative). Default: everything.'),
    force: z
      .boolean()
      .optional()
      .describe(
        'Also restore what a person changed since the snapshot (their version is lost from main, kept in the snapshot before this restore).',
      ),
  }),
  changes: () => MAIN_LINE,
  async execute({ snapshot, paths, force }, ctx) {
    const lines = linesOf(ctx)
    const outcome = await lines.restore(String(snapshot), {
      ...(paths === undefined ? {} : { paths }),
      ...(force === undefined ? {} : { force }),
      signal: ctx.signal,
    })
    switch (outcome.type) {
      case 'restored': {
        const undo = (await lines.snapshots()).find(
          (candidate) =>
            isListedSnapshot(candidate) && candidate.call?.tool === 'workspace_restore',
        )
        const parts = [
          `Restored snapshot #${outcome.snapshot}: ${outcome.paths.length} file(s)${outcome.paths.length === 0 ? '' : `: ${outcome.paths.join(', ')}`}.`,
          ...(outcome.refs.length === 0
            ? []
            : [`Git references moved back: ${outcome.refs.map(describeRef).join(', ')}.`]),
          ...(outcome.refsFailed.length === 0
            ? []
            : [
                `Not moved back: ${outcome.refsFailed.map((failure) => `${failure.name} (${failure.reason})`).join(', ')}.`,
              ]),
          ...(outcome.refsKept.length === 0
            ? []
            : [`Kept (made since the snapshot): ${outcome.refsKept.join(', ')}.`]),
          ...(outcome.tooLarge.length === 0
            ? []
            : [
                `Left alone (never snapshotted: over the size bound, in a nested repository, or refused by git): ${outcome.tooLarge.join(', ')}.`,
              ]),
          ...(undo === undefined ? [] : [`To undo this restore, restore snapshot #${undo.id}.`]),
        ]
        return toolSuccess(parts.join('\n'), {
          snapshot: outcome.snapshot,
          paths: outcome.paths,
          refs: outcome.refs,
          refsFailed: outcome.refsFailed,
          refsKept: outcome.refsKept,
          tooLarge: outcome.tooLarge,
          ...(undo === undefined ? {} : { undo: undo.id }),
        })
      }
      case 'nothing':
        return toolSuccess(
          `Nothing to restore: main already matches snapshot #${outcome.snapshot}${paths === undefined ? '' : ' for those paths'}.`,
          {
            snapshot: outcome.snapshot,
            paths: [],
            tooLarge: outcome.tooLarge,
          },
        )
      case 'changed-since': {
        const what = [...outcome.paths, ...outcome.refs.map((name) => `git reference ${name}`)]
        return toolError(
          'conflict',
          `Not restored: since snapshot #${outcome.snapshot} a person (not an eitri call) changed: ${what.join(', ')}. Nothing changed. Restore the other paths by naming them in paths, or ask the user whether to pass force: true to restore these too.`,
          { snapshot: outcome.snapshot, changedByPerson: outcome.paths, refs: outcome.refs },
        )
      }
      case 'protected':
        return toolError(
          'protected_path',
          `Not restored: the workspace's policy refuses writing ${outcome.refused.map((refused) => `${refused.path} (${refused.reason})`).join('; ')}. Nothing changed. Restore the other paths by naming them in paths, or ask the user.`,
          { snapshot: outcome.snapshot, refused: outcome.refused.map((refused) => refused.path) },
        )
      case 'changed-on-disk':
        return toolError(
          'conflict',
          `Not restored: these files changed on disk while restoring: ${outcome.paths.join(', ')}. Nothing changed; try again.`,
          { snapshot: outcome.snapshot, changed: outcome.paths },
        )
      case 'refused':
        return toolError(
          'permission_denied',
          `Not restored: ${outcome.reason}. The user can restore it at the terminal: eitri restore ${String(snapshot).replace(/^#/, '')}${paths === undefined ? '' : ` ${paths.join(' ')}`}`,
          { snapshot },
        )
    }
  },
})

function describeRef(ref: RestoredRef): string {
  const short = (value: string): string => (value.startsWith('ref: ') ? value : value.slice(0, 10))
  return `${ref.name} ${ref.from === undefined ? '(was gone)' : short(ref.from)} → ${short(ref.to)}`
}
