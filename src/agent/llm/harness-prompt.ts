/**
 * @module agent/llm/harness-prompt
 * What a model Run is told: a short preamble from the harness (what it is, that it may call only
 * the tools it is given, how its answer is returned), then the agent's own prompt. The task is
 * the user message.
 */
import type { AgentDef } from '../agent-def.ts'

/** The harness's preamble, before every agent's prompt. */
export const HARNESS_PREAMBLE = [
  'You are a model running as an agent inside the eitri harness.',
  'Call only the tools explicitly supplied to you in this conversation; no other tool exists, and each call runs confined in your own copy of the workspace.',
  'Work on the task in the user message. When you are done, reply with your final answer as plain text and call no tool: that text is your result.',
].join(' ')

/** The system prompt of a Run of `def`. */
export function systemPrompt(def: AgentDef): string {
  const own = def.prompt?.trim() ?? ''
  return own === '' ? HARNESS_PREAMBLE : `${HARNESS_PREAMBLE}\n\n${own}`
}

/** The user message of a task: a string as it is, anything else as JSON. */
export function taskMessage(task: unknown): string {
  return typeof task === 'string' ? task : (JSON.stringify(task) ?? '')
}
