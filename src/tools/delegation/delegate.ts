/**
 * @module tools/delegation/delegate
 * What spawn_agent and propose_change share: one hire of a model agent as a child of the
 * caller, waited for, its text answered. The agent is a profile (an agent of the configured
 * roster) or, by default, a `worker` like the caller: the same model, tools and access, in a
 * one-agent roster. The child's budget comes out of the caller's remainder.
 */
import { z } from 'zod'
import { EitriError } from '../../errors/eitri-error.ts'
import type { HireCall } from '../../ports/agent-runs.ts'
import type { ToolContext } from '../../tool/tool-context.ts'
import { toolError, toolSuccess, type ToolResult } from '../../tool/tool-result.ts'

/** A child's budget when the call names none, in dollars (less when the caller has less left). */
export const DEFAULT_DELEGATION_DOLLARS = 0.5

/** The id of the worker built from the caller. */
export const WORKER_ID = 'worker'

const WORKER_PROMPT =
  'You are a worker hired by another agent for one task. Do the task with the tools you are given, then answer with a short account of what you did and found: your answer is handed back to the agent that hired you.'

/** The input both tools take. */
export const delegationParameters = z.object({
  task: z.string().trim().min(1).describe('What the agent should do, in full: it sees only this.'),
  profile: z
    .string()
    .trim()
    .min(1)
    .optional()
    .describe(
      'An agent id of the configured roster to hire; by default a worker with your own model, tools and access.',
    ),
  budget: z
    .number()
    .positive()
    .optional()
    .describe(
      `Dollars the agent may spend, taken out of what you have left. Default ${DEFAULT_DELEGATION_DOLLARS} (or what you have left, when less).`,
    ),
})

/**
 * Why a caller cannot delegate; undefined when it can. Only a model Run that may hire can: the
 * default worker is built from its model, and its budget pays for the child.
 */
export async function delegationAvailability(ctx: ToolContext): Promise<string | undefined> {
  if (ctx.modelRun === undefined) {
    return 'Delegating is for model Runs (agents running an llm program): this call runs in none. agent_hire hires an agent from here.'
  }
  if (ctx.agents === undefined) {
    return 'This Run cannot hire agents: delegating needs eitri’s store and a workshop session.'
  }
  return undefined
}

/** Hires the agent `input` asks for with `settlement`, waits for it and answers its text. */
export async function delegate(
  tool: string,
  input: z.output<typeof delegationParameters>,
  settlement: 'automatic' | 'review',
  ctx: ToolContext,
): Promise<ToolResult> {
  const agents = ctx.agents
  const self = ctx.modelRun
  const unavailable = await delegationAvailability(ctx)
  if (agents === undefined || self === undefined || unavailable !== undefined) {
    return toolError('not_available', unavailable ?? 'Delegating is not available here.')
  }
  const left = self.check().remaining / 1_000_000
  const limits = { budgetDollars: input.budget ?? Math.min(DEFAULT_DELEGATION_DOLLARS, left) }
  let hire: HireCall = { agent: input.profile ?? WORKER_ID, task: input.task, settlement, limits }
  if (input.profile === undefined) {
    const worker = {
      id: WORKER_ID,
      name: 'Worker',
      prompt: WORKER_PROMPT,
      modelPolicy: self.modelPolicy,
      tools: [...self.tools],
      access: self.access,
      program: { kind: 'llm' },
    }
    hire = { ...hire, roster: { content: { agents: [worker] }, source: tool } }
  }
  let id: string
  try {
    id = await agents.hire(hire, { signal: ctx.signal })
  } catch (error) {
    if (EitriError.isInstance(error) && isCeiling(error)) {
      return toolError(
        'permission_denied',
        `${tool} refused: hiring this agent is beyond this Run's delegation authority (${error.message}) Do the work yourself with your own tools, or delegate from a Run that may hire model agents.`,
        { field: error.data['field'] },
      )
    }
    throw error
  }
  // Owned: cancelling this call cancels the child.
  const outcome = await agents.result(id, { signal: ctx.signal, owned: true })
  const metadata = {
    runId: id,
    status: outcome.status,
    settlement: outcome.settlementStatus,
  }
  if (outcome.status === 'completed') {
    const text = outcome.output ?? (typeof outcome.value === 'string' ? outcome.value : '')
    return toolSuccess(text, metadata)
  }
  const why = outcome.reason === null || outcome.reason === undefined ? '' : ` (${outcome.reason})`
  const error =
    outcome.error === undefined || outcome.error === null
      ? ''
      : `: ${typeof outcome.error === 'string' ? outcome.error : JSON.stringify(outcome.error)}`
  return toolError(
    'tool_failed',
    `The hired agent's Run ${id} ended ${outcome.status}${why}${error}. Its changes: ${outcome.settlementStatus}. Try a narrower task, a larger budget, or do it yourself.`,
    metadata,
  )
}

/** Whether a hire was refused by the delegation ceiling (program kinds, tools, depth). */
function isCeiling(error: EitriError): boolean {
  const field = error.data['field']
  return (
    error.code === 'permission_denied' &&
    (field === 'program' || field === 'tools' || field === 'depth')
  )
}
