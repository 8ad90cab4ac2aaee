/**
 * @module tools/runs/run-format
 * How Runs read to a model, and the Run log a call needs.
 */
import { EitriError } from '../../errors/eitri-error.ts'
import type { RunLog, RunView } from '../../ports/run-log.ts'
import type { ToolContext } from '../../tool/tool-context.ts'

/** One line per Run: `run-1 [failed: interrupted] agent helper, started …, ended …`. */
export function formatRun(run: RunView): string {
  const status = run.reason === null ? run.status : `${run.status}: ${run.reason}`
  const agent = run.agentId === undefined ? run.kind : `agent ${run.agentId}`
  const ended = run.endedAt === null ? '' : `, ended ${run.endedAt}`
  return `${run.id} [${status}; effects ${run.settlementStatus}] ${agent}, started ${run.startedAt}${ended}`
}

/** The call's Run log. @throws EitriError `not_available` when the call has no store. */
export function runLogOf(ctx: ToolContext): RunLog {
  if (ctx.runs === undefined) {
    throw new EitriError(
      'not_available',
      'Runs are kept in eitri’s store, and this caller has none; open the workshop with a store (the default) to read them.',
    )
  }
  return ctx.runs
}
