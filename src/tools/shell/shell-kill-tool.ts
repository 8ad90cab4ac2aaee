/**
 * @module tools/shell/shell-kill-tool
 * `shell_kill`: ends a background job and everything it started.
 */
import { z } from 'zod'
import { defineTool } from '../../tool/define-tool.ts'
import { toolSuccess } from '../../tool/tool-result.ts'
import { formatJob, unknownJob } from './shell-output-tool.ts'
import { programsOf, shellAvailability } from './shell-tool.ts'

/** Kills a background job. */
export const shellKillTool = defineTool({
  name: 'shell_kill',
  description: 'End a background shell job and every process it started; answers its last output.',
  availability: shellAvailability,
  parameters: z.object({
    id: z.string().min(1).describe('The job id that shell returned, such as job-1.'),
  }),
  async execute({ id }, ctx) {
    const read = await (await programsOf(ctx)).killJob(id)
    if (read === undefined) throw unknownJob(id)
    return toolSuccess(`Killed ${id} (${read.command}).\n\n${formatJob(read)}`, {
      id,
      killed: true,
    })
  },
})
