/**
 * @module tools/runs/run-observe-tool
 * `run_observe`: one Run in full: its row (status, result, settlement) and its journal.
 */
import { z } from 'zod'
import { EitriError } from '../../errors/eitri-error.ts'
import { defineTool } from '../../tool/define-tool.ts'
import { toolSuccess } from '../../tool/tool-result.ts'
import { formatRun, runLogOf } from './run-format.ts'

/** Shows one Run and its events. */
export const runObserveTool = defineTool({
  name: 'run_observe',
  description:
    'Show one Run: its status and why (reason, error), its result (value, output), what happened to its effects (settlement), its parent, and its journal of events in order.',
  parameters: z.object({
    id: z.string().trim().min(1).describe('The Run’s id, as run_list shows it.'),
  }),
  async execute({ id }, ctx) {
    const log = runLogOf(ctx)
    const run = await log.get(id, { signal: ctx.signal })
    if (run === undefined) {
      throw new EitriError(
        'not_found',
        `No Run with id ${JSON.stringify(id)}. run_list shows the ids of the Runs there are.`,
      )
    }
    const events = await log.events(id, { signal: ctx.signal })
    const lines = [formatRun(run)]
    if (run.parentId !== null) lines.push(`Parent: ${run.parentId}`)
    if (run.error !== null && run.error !== undefined)
      lines.push(`Error: ${JSON.stringify(run.error)}`)
    if (run.value !== null && run.value !== undefined)
      lines.push(`Value: ${JSON.stringify(run.value)}`)
    if (run.output !== null) lines.push(`Output: ${run.output}`)
    if (run.settlementReason !== null) lines.push(`Settlement: ${run.settlementReason}`)
    lines.push(events.length === 0 ? 'No events.' : 'Events:')
    for (const event of events) {
      const data =
        event.data === null || event.data === undefined ? '' : ` ${JSON.stringify(event.data)}`
      lines.push(`  ${event.sequence}. ${event.time} ${event.type}${data}`)
    }
    return toolSuccess(lines.join('\n'), { ...run, events })
  },
})
