/**
 * @module tools/runs/run-cancel-tool
 * `run_cancel`: cancels a Run this caller hired (its children first), and waits for it to
 * stop and settle.
 */
import { z } from 'zod'
import { EitriError } from '../../errors/eitri-error.ts'
import { defineTool } from '../../tool/define-tool.ts'
import { toolSuccess } from '../../tool/tool-result.ts'
import { agentsOf, describeOutcome } from './agents-of.ts'
import { runLogOf } from './run-format.ts'

/** Cancels a Run. */
export const runCancelTool = defineTool({
  name: 'run_cancel',
  description:
    'Cancel a Run you hired (and every Run it hired), wait for it to stop, and show how it ended. Its unfinished changes are discarded. Only your own Runs and their children can be cancelled.',
  parameters: z.object({
    id: z.string().trim().min(1).describe('The Run’s id, as agent_hire or run_list gave it.'),
  }),
  async execute({ id }, ctx) {
    const cancelled = await agentsOf(ctx).cancel(id, { signal: ctx.signal })
    const run = await runLogOf(ctx).get(id, { signal: ctx.signal })
    if (run === undefined) throw new EitriError('state_corrupt', `Run ${id} left the store.`)
    const content = cancelled
      ? `Cancelled. ${describeOutcome(run)}`
      : `Run ${id} had already ended; nothing to cancel. ${describeOutcome(run)}`
    return toolSuccess(content, { ...run, cancelled })
  },
})
