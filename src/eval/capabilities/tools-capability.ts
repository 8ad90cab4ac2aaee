/**
 * @module eval/capabilities/tools-capability
 * `tools`: any tool of the session's toolset, called from inside an eval through the whole
 * contract (allowlist, validation, confinement, access and approval), as if the agent had
 * called it. A per-eval budget bounds how many calls one eval makes; js_eval cannot call itself.
 */
import { z } from 'zod'
import { EitriError } from '../../errors/eitri-error.ts'
import { capabilityFunction, type Capability } from '../capability.ts'
import { TOOL_CALL_RESERVED_BYTES } from '../eval-limits.ts'

/** The tool that runs evals, which an eval may not call. */
export const EVAL_TOOL_NAME = 'js_eval'

/** The `tools` capability. */
export const toolsCapability: Capability = {
  name: 'tools',
  purpose:
    "Call the session's tools (the same ones the agent has) and orchestrate many calls in one eval.",
  example:
    "const hits = await tools.call('grep', { pattern: 'TODO' })\nif (hits.type === 'success') console.log(hits.content)",
  functions: [
    capabilityFunction({
      name: 'call',
      signature:
        "call(name: string, input: object): Promise<{ type: 'success' | 'error', content, metadata, code? }>",
      description:
        'Runs one tool call and answers its result (an error result is answered, not thrown). Each eval may make a limited number of calls.',
      parameters: z.tuple([z.string().min(1), z.record(z.string(), z.unknown()).optional()]),
      run: async ([name, input = {}], { ctx, toolset, usage, settings, bytes }) => {
        if (name === EVAL_TOOL_NAME) {
          throw new EitriError(
            'not_available',
            `${EVAL_TOOL_NAME} cannot be called from inside ${EVAL_TOOL_NAME}: write the code here instead.`,
          )
        }
        if (toolset === undefined) {
          throw new EitriError('not_available', 'This sandbox has no tools to call.')
        }
        if (usage.toolCalls >= settings.toolCallBudget) {
          throw new EitriError(
            'limit_exceeded',
            `This eval already made ${settings.toolCallBudget} tool calls, the most one eval may make; continue in another eval.`,
          )
        }
        usage.toolCalls++
        // What the tool may hold while it runs (a file it reads), before its result is cut.
        await bytes.reserve(TOOL_CALL_RESERVED_BYTES)
        const { evaluator: _evaluator, ...rest } = ctx
        return await toolset.run({ name, input }, rest)
      },
    }),
    capabilityFunction({
      name: 'list',
      signature: 'list(): Promise<{ name, description, parameters }[]>',
      description: 'The tools tools.call may run, with their JSON Schemas.',
      parameters: z.tuple([]),
      run: async (_args, { toolset }) =>
        (toolset?.offered() ?? [])
          .filter((tool) => tool.name !== EVAL_TOOL_NAME)
          .map((tool) => ({
            name: tool.name,
            description: tool.description,
            parameters: tool.parameters,
          })),
    }),
  ],
}
