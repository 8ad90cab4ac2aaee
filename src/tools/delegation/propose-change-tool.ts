/**
 * @module tools/delegation/propose-change-tool
 * `propose_change`: as spawn_agent, but the agent's changes are kept for a review instead of
 * merged.
 */
import { defineTool } from '../../tool/define-tool.ts'
import { delegate, delegationAvailability, delegationParameters } from './delegate.ts'

/** Delegates a task, keeping the agent's changes for review. */
export const proposeChangeTool = defineTool({
  name: 'propose_change',
  description:
    'Hand a change to another model agent and wait for its answer. It works in its own fork of your world with at most your tools and access, spends from your budget, and its changes are kept for review (run_settle merges or discards them) rather than merged. Answers with its final text.',
  parameters: delegationParameters,
  availability: delegationAvailability,
  execute: (input, ctx) => delegate('propose_change', input, 'review', ctx),
})
