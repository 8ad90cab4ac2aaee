/**
 * @module tools/workspace/lines-of
 * The session's lines, or a clear refusal when this context has none.
 */
import { EitriError } from '../../errors/eitri-error.ts'
import type { LineChangeInfo, LineConflictInfo, LineControl } from '../../ports/line-control.ts'
import type { ToolContext } from '../../tool/tool-context.ts'

/** The lines of the call's session. */
export function linesOf(ctx: ToolContext): LineControl {
  if (ctx.lines === undefined)
    throw new EitriError(
      'not_available',
      'This session has no versioned workspace: forks are not available here.',
    )
  return ctx.lines
}

/** Changes as a model reads them: a summary line each, then the diffs. */
export function describeChanges(changes: readonly LineChangeInfo[], withDiffs: boolean): string {
  if (changes.length === 0) return 'No changes.'
  const summary = changes
    .map((change) => `${change.status.padEnd(8)} ${change.path}${change.binary ? ' (binary)' : ''}`)
    .join('\n')
  if (!withDiffs) return summary
  const diffs = changes.flatMap((change) => (change.diff === undefined ? [] : [change.diff]))
  return diffs.length === 0 ? summary : `${summary}\n\n${diffs.join('\n\n')}`
}

/** Conflicts with both sides. */
export function describeConflicts(conflicts: readonly LineConflictInfo[]): string {
  return conflicts
    .map(
      (conflict) =>
        `CONFLICT ${conflict.path}\n--- main side (ours):\n${side(conflict.ours)}\n--- fork side (theirs):\n${side(conflict.theirs)}`,
    )
    .join('\n\n')
}

function side(text: string | undefined): string {
  return text === undefined ? '(deleted)' : text.replace(/\n$/, '')
}
