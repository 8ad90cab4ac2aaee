/**
 * @module tools/workspace/workspace-tools
 * Forks of the workspace as tools: fork, list, use, diff, review, merge, discard, log.
 */
import { z } from 'zod'
import { EitriError } from '../../errors/eitri-error.ts'
import { defineTool } from '../../tool/define-tool.ts'
import { toolError, toolSuccess } from '../../tool/tool-result.ts'
import { describeChanges, describeConflicts, linesOf } from './lines-of.ts'
import { MAIN_LINE, type LineControl } from '../../ports/line-control.ts'
import { displayName } from '../../workspace/fork-registry.ts'

const forkName = z.string().min(1).describe('A fork, by id or name.')
/** The fork to diff, review or merge: named, or the one this session works on. */
const forkOrCurrent = z
  .string()
  .min(1)
  .optional()
  .describe(
    'A fork, by id or name. Default: the fork this session works on (under --isolate, its own).',
  )

/**
 * The fork a call names, else the session's current line when that is a fork: under
 * `--isolate` a connection's own fork is the one it means (decision 0056).
 */
function chosenFork(fork: string | undefined, current: string, tool: string): string {
  if (fork !== undefined) return fork
  if (current !== MAIN_LINE) return current
  throw new EitriError(
    'invalid_input',
    `${tool}: this session works on main, so name the fork ({"fork": "NAME"}); workspace_list shows them.`,
  )
}

/** Forks the session's current line. */
export const workspaceForkTool = defineTool({
  name: 'workspace_fork',
  description:
    'Fork the workspace line this session works on (main, or the fork in use), or the line `from`: a new line of work where anything can be tried. Copies nothing. Switch to it with workspace_use.',
  parameters: z.object({
    name: z.string().min(1).optional().describe('A name for the fork (letters, digits, . _ -).'),
    from: z
      .string()
      .min(1)
      .optional()
      .describe(
        'The line to fork, by id or name, or "main". Default: the line this session works on.',
      ),
  }),
  async execute({ name, from }, ctx) {
    const lines = linesOf(ctx)
    const fork = await lines.fork({
      ...(name === undefined ? {} : { name }),
      ...(from === undefined ? {} : { from }),
    })
    // The line forked by the name it is known by (an isolated session's fork is its client's).
    const parent = lines.list().find((line) => line.id === fork.parent)
    return toolSuccess(
      `Forked ${parent === undefined ? fork.parent : displayName(parent)} as ${displayName(fork)} (id ${fork.id}). Use it with workspace_use {"fork":"${displayName(fork)}"}.`,
      { fork: fork.id, parent: fork.parent },
    )
  },
})

/** Lists the forks. */
export const workspaceListTool = defineTool({
  name: 'workspace_list',
  description:
    'List the forks of the workspace and which line this session works on: each fork’s state (open, merged, discarded), how many files it changed and when it was last active.',
  parameters: z.object({}),
  async execute(_input, ctx) {
    const lines = linesOf(ctx)
    const forks = await lines.overview()
    const rows = forks.map(
      (fork) =>
        `${fork.id === lines.current ? '*' : ' '} ${fork.id}${fork.name === undefined ? '' : ` (${fork.name})`} ${fork.state}, ${fork.changes} file(s) changed, last active ${fork.lastActivity}; from ${fork.parent}${fork.readOnly ? ', read-only' : ''}, created ${fork.created}`,
    )
    return toolSuccess(
      `${lines.current === MAIN_LINE ? '*' : ' '} main (the live folder)\n${rows.join('\n')}`.trimEnd(),
      { current: lines.current, forks },
    )
  },
})

/** Binds the session's tools to a line. */
export const workspaceUseTool = defineTool({
  name: 'workspace_use',
  description:
    'Make this session’s tools (files, shell, js_eval) act on a fork, or back on main. Takes effect at the next call.',
  parameters: z.object({ fork: z.string().min(1).describe('A fork by id or name, or "main".') }),
  async execute({ fork }, ctx) {
    const lines = linesOf(ctx)
    const outcome = await lines.use(fork, { signal: ctx.signal })
    if (outcome.type === 'refused')
      return toolError(
        'permission_denied',
        `Still on ${lines.current}: switching to ${outcome.line} needs a person's approval (${outcome.reason}). Work in your fork and merge it (a person approves the merge).`,
        { line: lines.current },
      )
    // The fork as it was named, and whether it still takes writes (a merged fork does not).
    const info = (await lines.overview()).find((line) => line.id === lines.current)
    const shown = info === undefined ? lines.current : `${displayName(info)} (${info.id})`
    const readOnly =
      info?.state === 'merged'
        ? ' It was merged, so it is read-only: its files can be read, writes are refused; fork main to go on.'
        : info?.readOnly === true
          ? ' It is read-only: writes are refused.'
          : ''
    return toolSuccess(`This session now works on ${shown}.${readOnly}`, { line: lines.current })
  },
})

/** What a fork changed. */
export const workspaceDiffTool = defineTool({
  name: 'workspace_diff',
  description:
    'Show what a fork changed since it was forked: added, modified and deleted files with unified diffs (binary files named). Without `fork`, the fork this session works on.',
  parameters: z.object({ fork: forkOrCurrent }),
  async execute(input, ctx) {
    const lines = linesOf(ctx)
    const changes = await lines.diff(chosenFork(input.fork, lines.current, 'workspace_diff'))
    return toolSuccess(describeChanges(changes, true), {
      changes: changes.map(({ path, status, binary }) => ({ path, status, binary })),
    })
  },
})

/** How much review a fork needs. */
export const workspaceReviewTool = defineTool({
  name: 'workspace_review',
  description:
    'Review a fork before merging: tier trivial (nothing changed), reviewable, or conflict (its changes overlap its parent’s), with the changes and conflicts. Without `fork`, the fork this session works on.',
  parameters: z.object({ fork: forkOrCurrent }),
  async execute(input, ctx) {
    const lines = linesOf(ctx)
    const review = await lines.review(chosenFork(input.fork, lines.current, 'workspace_review'))
    const body =
      review.tier === 'conflict'
        ? `${describeChanges(review.changes, false)}\n\n${describeConflicts(review.conflicts)}`
        : describeChanges(review.changes, true)
    return toolSuccess(`Tier: ${review.tier}\n\n${body}`, {
      tier: review.tier,
      changes: review.changes.length,
      conflicts: review.conflicts.map((conflict) => conflict.path),
    })
  },
})

/** Merges a fork into its parent. */
export const workspaceMergeTool = defineTool({
  name: 'workspace_merge',
  description:
    'Merge a fork into its parent line (three-way). Into main, the user’s live folder, only with a person’s approval. Overlapping changes are reported as conflicts and nothing changes. Without `fork`, the fork this session works on.',
  parameters: z.object({ fork: forkOrCurrent }),
  changes: (input, ctx) => {
    const lines = linesOf(ctx)
    const id = lines.resolve(chosenFork(input.fork, lines.current, 'workspace_merge'))
    return lines.list().find((line) => line.id === id)?.parent ?? MAIN_LINE
  },
  async execute(input, ctx) {
    const lines = linesOf(ctx)
    // By id, never by a name another fork may share; shown by the name it is known by.
    const target = chosenFork(input.fork, lines.current, 'workspace_merge')
    const fork = input.fork ?? displayedLine(lines, target)
    const outcome = await lines.merge(target, { signal: ctx.signal })
    switch (outcome.type) {
      case 'merged':
        return toolSuccess(
          [
            `Merged ${fork} into ${outcome.into}: ${outcome.paths.length} file(s): ${outcome.paths.join(', ')}`,
            ...(outcome.notes ?? []),
          ].join('\n\n'),
          { into: outcome.into, paths: outcome.paths, notes: outcome.notes ?? [] },
        )
      case 'nothing':
        return toolSuccess(`Nothing to merge: ${fork} changes nothing in ${outcome.into}.`, {
          into: outcome.into,
          paths: [],
        })
      case 'conflict':
        return toolError(
          'merge_conflict',
          `Not merged: ${outcome.conflicts.length} conflict(s); nothing changed. Resolve them in the fork (make its side agree), then merge again.\n\n${describeConflicts(outcome.conflicts)}`,
          { into: outcome.into, conflicts: outcome.conflicts.map((conflict) => conflict.path) },
        )
      case 'changed-on-disk':
        return toolError(
          'merge_conflict',
          `Not merged: these files changed on disk while merging: ${outcome.paths.join(', ')}. Nothing changed; merge again.`,
          { into: outcome.into, changed: outcome.paths },
        )
      case 'refused':
        return toolError(
          'permission_denied',
          `Not merged into ${outcome.into}: ${outcome.reason}`,
          { into: outcome.into },
        )
    }
  },
})

/** A line by the name it is shown by, else its id. */
function displayedLine(lines: LineControl, id: string): string {
  const line = lines.list().find((candidate) => candidate.id === id)
  return line === undefined ? id : displayName(line)
}

/** Throws a fork away. */
export const workspaceDiscardTool = defineTool({
  name: 'workspace_discard',
  description:
    'Discard a fork and everything written in it (files, tasks, knowledge). Cannot be undone.',
  parameters: z.object({ fork: forkName }),
  async execute({ fork }, ctx) {
    await linesOf(ctx).discard(fork)
    return toolSuccess(`Discarded ${fork}.`, { fork })
  },
})

/** The history of a line. */
export const workspaceLogTool = defineTool({
  name: 'workspace_log',
  description: 'The commits of a line (main by default), newest first.',
  parameters: z.object({
    fork: z.string().min(1).optional().describe('A fork by id or name; default main.'),
  }),
  async execute({ fork }, ctx) {
    const log = await linesOf(ctx).log(fork ?? MAIN_LINE)
    return toolSuccess(
      log.length === 0
        ? 'No commits yet.'
        : log
            .map((entry) => `${entry.commit.slice(0, 10)} ${entry.time} ${entry.message}`)
            .join('\n'),
      { commits: log },
    )
  },
})
