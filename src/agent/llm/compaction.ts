/**
 * @module agent/llm/compaction
 * Keeping a long conversation within the model's context window. Past 70% of the window, the
 * outputs of old tool calls are pruned first (the last two turns stay whole); if that is not
 * enough, the earlier history is replaced by a summary written by a model, aiming at about 40%
 * of the window. The Run's chat keeps every message as it was: only what the model is sent
 * shrinks.
 */
import type { ModelMessage } from 'ai'
import { conversationTokens } from './message-tokens.ts'

/** The share of the context window past which a conversation is compacted. */
export const COMPACT_AT = 0.7

/** The share of the window a summary aims at. */
export const COMPACT_TO = 0.4

/** How many of the last turns (a model answer and its tool results) are never pruned. */
export const KEPT_TURNS = 2

/** What a pruned tool output is replaced by. */
export const PRUNED_OUTPUT =
  '[an older tool output, pruned to keep the conversation within the context window]'

/** The tokens a conversation is estimated to take, besides the system prompt and tools. */
export function messagesTokens(messages: readonly ModelMessage[]): number {
  return conversationTokens(messages)
}

/** Where the last `turns` turns start: the index of the first of the last `turns` answers. */
export function tailStart(messages: readonly ModelMessage[], turns = KEPT_TURNS): number {
  let seen = 0
  for (let index = messages.length - 1; index >= 0; index--) {
    if (messages[index]?.role === 'assistant' && ++seen === turns) return index
  }
  return 0
}

/** The messages with every tool output before the last turns replaced by a short note. */
export function pruneToolOutputs(messages: readonly ModelMessage[]): ModelMessage[] {
  const tail = tailStart(messages)
  return messages.map((message, index) => {
    if (index >= tail || message.role !== 'tool') return message
    return {
      ...message,
      content: message.content.map((part) =>
        part.type === 'tool-result'
          ? { ...part, output: { type: 'text' as const, value: PRUNED_OUTPUT } }
          : part,
      ),
    }
  })
}

/** A plain-text transcript of messages, for a summariser that is offered no tools. */
export function transcript(messages: readonly ModelMessage[]): string {
  return messages
    .map((message) => {
      const content =
        typeof message.content === 'string'
          ? message.content
          : message.content
              .map((part) => {
                if (part.type === 'text') return part.text
                if (part.type === 'tool-call') {
                  return `[called ${part.toolName} with ${JSON.stringify(part.input)}]`
                }
                if (part.type === 'tool-result') {
                  return `[${part.toolName} answered: ${JSON.stringify(part.output)}]`
                }
                return `[${part.type}]`
              })
              .join('\n')
      return `${message.role}: ${content}`
    })
    .join('\n\n')
}

/** The system prompt of the summariser. */
export const SUMMARY_SYSTEM =
  'You compact the history of an agent working on a task. Summarise what it has done and learnt so far: the facts found, the changes made, what failed, and what remains. Be concrete (file names, values, errors). Reply with the summary only.'

/**
 * The conversation after a summary: the task with the summary appended (so the model still
 * reads the task first), then the last turns whole.
 */
export function summarised(
  messages: readonly ModelMessage[],
  task: string,
  summary: string,
): ModelMessage[] {
  return [
    {
      role: 'user',
      content: `${task}\n\n[Summary of your earlier work on this task, compacted to fit the context window]\n${summary}`,
    },
    ...messages.slice(tailStart(messages)),
  ]
}
