/**
 * @module tools/runs/agents-of
 * The call's agents, and how a settled Run reads to a model.
 */
import { EitriError } from '../../errors/eitri-error.ts'
import type { AgentRuns } from '../../ports/agent-runs.ts'
import type { RunView } from '../../ports/run-log.ts'
import type { ToolContext } from '../../tool/tool-context.ts'

/** The call's agents. @throws EitriError `not_available` when this caller may not hire. */
export function agentsOf(ctx: ToolContext): AgentRuns {
  if (ctx.agents === undefined) {
    throw new EitriError(
      'not_available',
      'This caller cannot hire agents: Runs need eitri’s store and a workshop session (the default when eitri serves).',
    )
  }
  return ctx.agents
}

/**
 * What a Run came to, in a sentence: its status and result, then where its effects went. The
 * way to settle one kept for review is told only when `yours` (the caller may settle it).
 */
export function describeOutcome(run: RunView, yours = true): string {
  const lines = [`Run ${run.id} ${run.status}${run.reason === null ? '' : ` (${run.reason})`}.`]
  if (run.status === 'completed' && run.output !== null) lines.push(`Output: ${run.output}`)
  if (run.error !== null && run.error !== undefined)
    lines.push(`Error: ${JSON.stringify(run.error)}`)
  const settlement =
    run.settlementReason === null
      ? run.settlementStatus
      : `${run.settlementStatus} (${run.settlementReason})`
  lines.push(`Its effects: ${settlement}.`)
  if (run.settlementStatus === 'review' && !yours) {
    lines.push(
      `Kept for review by the session or process that hired it, which settles it (a person can, with \`eitri runs merge|discard ${run.id}\`).`,
    )
  } else if (run.settlementStatus === 'review') {
    lines.push(
      `Kept for review: workspace_review shows its fork; run_settle {"id": "${run.id}", "action": "merge"} or "discard" settles it.`,
    )
  }
  return lines.join('\n')
}

/**
 * How a caller can stop a Run still running: run_cancel when it is its own, else only the
 * session or process that hired it (or a person) can.
 */
export function howToStop(id: string, yours: boolean): string {
  return yours
    ? 'run_cancel to stop it'
    : `only the session or process that hired it can stop it (a person can, with \`eitri runs cancel ${id}\`)`
}
