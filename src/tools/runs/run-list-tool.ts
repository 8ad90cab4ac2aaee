/**
 * @module tools/runs/run-list-tool
 * `run_list`: the Runs in the store, newest first, optionally of one status or parent.
 */
import { z } from 'zod'
import { defineTool } from '../../tool/define-tool.ts'
import { toolSuccess } from '../../tool/tool-result.ts'
import { RUN_STATUSES } from '../../store/run-record.ts'
import { formatRun, runLogOf } from './run-format.ts'

/** Lists Runs, newest first. */
export const runListTool = defineTool({
  name: 'run_list',
  description:
    'List the Runs (agent tasks and turns) eitri recorded, newest first, one per line: id [status: reason; effects settlement] agent, started, ended. A Run whose process died shows as failed: interrupted. Filter by status or by parent Run; run_observe shows one Run in full.',
  parameters: z.object({
    status: z
      .enum(RUN_STATUSES)
      .optional()
      .describe('Only Runs with this status: running, waiting, completed, failed or cancelled.'),
    parent: z
      .string()
      .trim()
      .min(1)
      .optional()
      .describe('Only the Runs started by this Run (its id, as run_list shows it).'),
  }),
  async execute({ status, parent }, ctx) {
    const runs = await runLogOf(ctx).list({ status, parentId: parent }, { signal: ctx.signal })
    const filtered = [
      status === undefined ? '' : ` ${status}`,
      parent === undefined ? '' : ` started by ${parent}`,
    ]
    const content =
      runs.length === 0 ? `No${filtered[0]} Runs${filtered[1]}.` : runs.map(formatRun).join('\n')
    return toolSuccess(content, { count: runs.length, runs })
  },
})
