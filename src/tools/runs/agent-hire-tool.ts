/**
 * @module tools/runs/agent-hire-tool
 * `agent_hire`: hires an agent as a durable Run in its own fork, and answers at once.
 */
import { z } from 'zod'
import { EitriError } from '../../errors/eitri-error.ts'
import type { RosterSource } from '../../ports/agent-runs.ts'
import { defineTool } from '../../tool/define-tool.ts'
import type { ToolContext } from '../../tool/tool-context.ts'
import { toolSuccess } from '../../tool/tool-result.ts'
import { agentsOf } from './agents-of.ts'

/** The most bytes of a roster file read from the workspace. */
const MAX_ROSTER_BYTES = 8 * 1024 * 1024

/** Hires an agent. */
export const agentHireTool = defineTool({
  name: 'agent_hire',
  description:
    'Hire an agent for a task: it runs as a durable Run in its own fork of your line, with no more tools or access than you have, and this answers at once with the Run’s id. run_await waits for its result; run_cancel stops it; a Run with settlement "review" keeps its changes for run_settle. The agents come from the roster file named, else from the configuration.',
  parameters: z.object({
    agent: z
      .string()
      .trim()
      .min(1)
      .describe('The agent’s id in the roster (its current version is hired).'),
    task: z.string().min(1).describe('What the agent should do.'),
    roster: z
      .string()
      .trim()
      .min(1)
      .optional()
      .describe(
        'A roster file in the workspace ({"agents": [...]}); by default the configuration’s agents.',
      ),
    settlement: z
      .enum(['automatic', 'review', 'discard'])
      .optional()
      .describe(
        'What happens to the Run’s changes when it ends: automatic (merged when it completes; into main only with a person’s yes), review (kept for run_settle) or discard. Default automatic.',
      ),
  }),
  async execute({ agent, task, roster, settlement }, ctx) {
    const agents = agentsOf(ctx)
    const id = await agents.hire(
      {
        agent,
        task,
        settlement,
        ...(roster === undefined ? {} : { roster: await readRoster(ctx, roster) }),
      },
      { signal: ctx.signal },
    )
    return toolSuccess(
      `Hired ${agent} as Run ${id}; it works in its own fork. run_await {"id": "${id}"} waits for its result; run_cancel stops it.`,
      { id, agent },
    )
  },
})

/** A roster file of the workspace, read with the caller's access, as plain data. */
async function readRoster(ctx: ToolContext, file: string): Promise<RosterSource> {
  const bytes = await ctx.workspace.readFile(file, {
    signal: ctx.signal,
    maxBytes: MAX_ROSTER_BYTES,
  })
  let content: unknown
  try {
    content = JSON.parse(new TextDecoder().decode(bytes))
  } catch (error) {
    throw new EitriError(
      'invalid_input',
      `The roster file ${file} is not valid JSON (${(error as Error).message}); a roster is {"agents": [...]}.`,
      { data: { field: 'roster' } },
    )
  }
  return { content, source: file }
}
