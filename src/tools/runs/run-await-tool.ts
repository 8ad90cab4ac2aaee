/**
 * @module tools/runs/run-await-tool
 * `run_await`: waits a while for a Run to stop and settle, telling the client it is waiting,
 * and answers its status either way.
 */
import { z } from 'zod'
import { defineTool } from '../../tool/define-tool.ts'
import { toolSuccess } from '../../tool/tool-result.ts'
import { agentsOf, describeOutcome, howToStop } from './agents-of.ts'

/** The longest one call waits: well inside an MCP client's request timeout. */
export const MAX_AWAIT_SECONDS = 45

/** Waits for a Run. */
export const runAwaitTool = defineTool({
  name: 'run_await',
  description: `Wait for a Run to end and settle (at most ${MAX_AWAIT_SECONDS} s per call), then show its status, result and where its changes went. Still running when the wait ends: call it again. Any Run in the store can be awaited.`,
  parameters: z.object({
    id: z.string().trim().min(1).describe('The Run’s id, as agent_hire or run_list gave it.'),
    wait_s: z
      .number()
      .min(0)
      .max(MAX_AWAIT_SECONDS)
      .optional()
      .describe(`How long to wait at most, in seconds (0–${MAX_AWAIT_SECONDS}). Default 30.`),
  }),
  async execute({ id, wait_s }, ctx) {
    const seconds = wait_s ?? 30
    const { run, settled, yours } = await agentsOf(ctx).wait(id, {
      waitMs: seconds * 1000,
      signal: ctx.signal,
      onWaiting: (waitedMs) =>
        ctx.progress?.({
          progress: Math.floor(waitedMs / 1000),
          total: seconds,
          message: `Waiting for Run ${id}`,
        }),
    })
    const content = settled
      ? describeOutcome(run, yours)
      : `Run ${id} is still ${run.status} after ${seconds} s${run.status === 'running' ? '' : ', settling its effects'}; call run_await again to go on waiting; ${howToStop(id, yours)}.`
    return toolSuccess(content, { ...run, settled })
  },
})
