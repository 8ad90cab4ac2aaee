/**
 * @module tools/delegation/spawn-agent-tool
 * `spawn_agent`: hands a task to a model agent in its own fork, waits, and answers its text;
 * its changes are merged into the caller's world when it completes.
 */
import { defineTool } from '../../tool/define-tool.ts'
import { delegate, delegationAvailability, delegationParameters } from './delegate.ts'

/** Delegates a task, merging the agent's changes. */
export const spawnAgentTool = defineTool({
  name: 'spawn_agent',
  description:
    'Hand a task to another model agent and wait for its answer. It works in its own fork of your world with at most your tools and access, spends from your budget, and its changes are merged into your world when it completes. Answers with its final text.',
  parameters: delegationParameters,
  availability: delegationAvailability,
  execute: (input, ctx) => delegate('spawn_agent', input, 'automatic', ctx),
})
