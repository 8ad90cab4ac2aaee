/**
 * @module tools/modes/mode-tools
 * `mode_get`, `mode_set` and `exit_plan_mode`: the session's mode as the agent sees it. A model
 * may narrow its own access at once; only a person widens it.
 */
import { z } from 'zod'
import { EitriError } from '../../errors/eitri-error.ts'
import type { ModeControl } from '../../ports/access-context.ts'
import { defineTool } from '../../tool/define-tool.ts'
import type { ToolContext } from '../../tool/tool-context.ts'
import { toolError, toolSuccess } from '../../tool/tool-result.ts'

function modesOf(ctx: ToolContext): ModeControl {
  const modes = ctx.access?.modes
  if (modes === undefined)
    throw new EitriError('not_available', 'This session has no modes: it runs with a fixed access.')
  return modes
}

/** Tells the current mode, the access in force and the modes available. */
export const modeGetTool = defineTool({
  name: 'mode_get',
  description:
    'Tell the current mode, its access cap, the session setting, the effective access, and the modes available.',
  parameters: z.object({}),
  async execute(_input, ctx) {
    const state = modesOf(ctx).describe()
    const list = state.modes.map(
      (mode) =>
        `- ${mode.name}${mode.access === undefined ? '' : ` (cap ${mode.access})`}: ${mode.description}`,
    )
    return toolSuccess(
      `Mode: ${state.mode}${state.cap === undefined ? '' : ` (cap ${state.cap})`}\nAccess setting: ${state.setting}\nEffective access: ${state.effective}${state.effective === 'full-access' ? ' (DANGEROUS: programs may run outside the jail with approval)' : ''}\n\nModes:\n${list.join('\n')}`,
      { ...state, modes: state.modes.map((mode) => mode.name) },
    )
  },
})

/** Switches mode: narrowing at once, widening only with a person's approval. */
export const modeSetTool = defineTool({
  name: 'mode_set',
  description:
    'Switch the session to another mode, from the next call on. Narrowing access (entering plan mode) is immediate; widening it asks a person.',
  parameters: z.object({
    mode: z.string().min(1).describe('The mode to switch to, such as plan or default.'),
    reason: z
      .string()
      .optional()
      .describe('Why, shown to the person when the switch widens access.'),
  }),
  async execute({ mode, reason }, ctx) {
    const outcome = await modesOf(ctx).set(mode, {
      signal: ctx.signal,
      ...(reason === undefined ? {} : { reason }),
    })
    if (outcome.refused) {
      return toolError('permission_denied', outcome.message, { mode })
    }
    return toolSuccess(outcome.message, { mode, changed: outcome.changed })
  },
})

/** Asks a person to approve the plan and leave plan mode. */
export const exitPlanModeTool = defineTool({
  name: 'exit_plan_mode',
  description:
    'Present your plan to the person and ask to leave plan mode. If they approve, the session returns to the default mode at the next call; otherwise it stays in plan mode.',
  parameters: z.object({
    plan: z.string().min(1).describe('The plan, as the person should read it.'),
  }),
  async execute({ plan }, ctx) {
    const modes = modesOf(ctx)
    if (modes.describe().mode !== 'plan') {
      return toolError(
        'invalid_input',
        `The session is not in plan mode (it is in ${modes.describe().mode} mode); nothing to exit.`,
      )
    }
    const outcome = await modes.set('default', { signal: ctx.signal, reason: plan, ask: true })
    if (!outcome.changed) {
      return toolError('permission_denied', `Keep planning: ${outcome.message}`, { mode: 'plan' })
    }
    return toolSuccess(`Plan approved. ${outcome.message}`, { mode: 'default' })
  },
})

/** The mode tools, in the order they are offered. */
export const modeTools = [modeGetTool, modeSetTool, exitPlanModeTool] as const
