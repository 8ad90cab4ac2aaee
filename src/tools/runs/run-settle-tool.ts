/**
 * @module tools/runs/run-settle-tool
 * `run_settle`: merges or discards the changes of a Run kept for review.
 */
import { z } from 'zod'
import { EitriError } from '../../errors/eitri-error.ts'
import { defineTool } from '../../tool/define-tool.ts'
import { toolSuccess } from '../../tool/tool-result.ts'
import { agentsOf, describeOutcome } from './agents-of.ts'
import { runLogOf } from './run-format.ts'

/** Settles a Run kept for review. */
export const runSettleTool = defineTool({
  name: 'run_settle',
  description:
    'Settle a Run you hired whose changes were kept for review: merge them into the line it was hired from (into main, the user’s folder, only with a person’s yes) or discard them. workspace_review shows them first.',
  parameters: z.object({
    id: z.string().trim().min(1).describe('The Run’s id, as agent_hire or run_list gave it.'),
    action: z.enum(['merge', 'discard']).describe('merge its changes, or discard them'),
  }),
  // A merge lands in the line the Run was hired from, which is the caller's line (a Run is
  // used only from there).
  changes: 'current-line',
  async execute({ id, action }, ctx) {
    const outcome = await agentsOf(ctx).settle(id, action, { signal: ctx.signal })
    if (!outcome.settled) {
      throw new EitriError(
        'permission_denied',
        `Run ${id} was not merged: ${outcome.reason}. Its changes stay for review; run_settle with "discard" throws them away.`,
      )
    }
    const run = await runLogOf(ctx).get(id, { signal: ctx.signal })
    if (run === undefined) throw new EitriError('state_corrupt', `Run ${id} left the store.`)
    return toolSuccess(describeOutcome(run), { ...run })
  },
})
