/**
 * @module tools/budget/budget-tool
 * `budget`: what the caller's model Run may still spend, where its money went, and what its
 * next model call may cost, in micro-dollars. Offered only inside a model Run: elsewhere there
 * is no budget, and a call is refused saying so.
 */
import { z } from 'zod'
import type { BudgetBreakdown, BudgetCheck, BudgetEstimate } from '../../ports/model-run.ts'
import { defineTool } from '../../tool/define-tool.ts'
import { toolError, toolSuccess } from '../../tool/tool-result.ts'

/** The output tokens an estimate assumes when the call names none. */
export const DEFAULT_ESTIMATE_OUTPUT_TOKENS = 500

/** Why there is no budget here. */
const NO_BUDGET =
  'There is no budget here: budget reports the dollar budget of a model Run (an agent running an llm program), and this call runs in none.'

/** Reports the Run's budget. */
export const budgetTool = defineTool({
  name: 'budget',
  description:
    'Your dollar budget, in micro-dollars (1 USD = 1,000,000 μ$). "check": your budget, spent, reserved and remaining; "breakdown": the cost of each model call, per model, and what your hired agents spent; "estimate": what your next model call may cost with output_tokens of output (default 500).',
  parameters: z.object({
    operation: z.enum(['check', 'breakdown', 'estimate']).describe('What to report.'),
    output_tokens: z
      .number()
      .int()
      .min(1)
      .max(1_000_000)
      .optional()
      .describe(
        `For estimate: the output tokens to price. Default ${DEFAULT_ESTIMATE_OUTPUT_TOKENS}.`,
      ),
  }),
  availability: async (ctx) => (ctx.modelRun === undefined ? NO_BUDGET : undefined),
  async execute({ operation, output_tokens }, ctx) {
    const run = ctx.modelRun
    if (run === undefined) return toolError('not_available', NO_BUDGET)
    switch (operation) {
      case 'check': {
        const check = run.check()
        return toolSuccess(checkText(check), { unit: 'μ$', ...check })
      }
      case 'breakdown': {
        const breakdown = run.breakdown()
        return toolSuccess(breakdownText(breakdown), { unit: 'μ$', ...breakdown })
      }
      case 'estimate': {
        const estimate = run.estimate(output_tokens ?? DEFAULT_ESTIMATE_OUTPUT_TOKENS)
        return toolSuccess(estimateText(estimate), { unit: 'μ$', ...estimate })
      }
    }
  },
})

function checkText(check: BudgetCheck): string {
  return [
    `Budget: ${check.budget} μ$.`,
    `Spent: ${check.spent} μ$; reserved for a call in flight: ${check.reserved} μ$; carved out for running agents: ${check.carved} μ$.`,
    `Remaining: ${check.remaining} μ$.`,
  ].join('\n')
}

function breakdownText(breakdown: BudgetBreakdown): string {
  const lines = breakdown.lines.map(
    (line) =>
      `step ${line.step} ${line.kind} ${line.model}: ${line.inputTokens} in, ${line.outputTokens} out, ${line.cost} μ$`,
  )
  const models = Object.entries(breakdown.byModel).map(
    ([model, cost]) => `${model}: ${cost} μ$ in all`,
  )
  return [
    ...(lines.length === 0 ? ['No model call has been settled yet.'] : lines),
    ...models,
    `Hired agents that ended: ${breakdown.children} μ$.`,
  ].join('\n')
}

function estimateText(estimate: BudgetEstimate): string {
  return `The next call to ${estimate.model} may cost up to ${estimate.cost} μ$ (about ${estimate.inputTokens} input tokens so far, ${estimate.outputTokens} output tokens); ${estimate.remaining} μ$ remain, so it ${estimate.affordable ? 'fits' : 'does not fit'}.`
}
