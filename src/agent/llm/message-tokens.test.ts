import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { ModelMessage } from 'ai'
import { conversationTokens } from './message-tokens.ts'
import { estimateTokens } from './model-budget.ts'

/** A conversation of ASCII, accented and CJK text, tool calls and results. */
function conversation(): ModelMessage[] {
  return [
    { role: 'user', content: 'Résume le fichier 日本語.md, s’il te plaît.' },
    {
      role: 'assistant',
      content: [
        { type: 'text', text: 'Je le lis.' },
        {
          type: 'tool-call',
          toolCallId: 'c1',
          toolName: 'read_file',
          input: { path: '日本語.md' },
        },
      ],
    },
    {
      role: 'tool',
      content: [
        {
          type: 'tool-result',
          toolCallId: 'c1',
          toolName: 'read_file',
          output: { type: 'text', value: '# 見出し\n"quoted" \\ back\u0001slash 🙂' },
        },
      ],
    },
    { role: 'assistant', content: 'Done: 1 heading.' },
  ]
}

describe('conversationTokens', () => {
  it('gives exactly estimateTokens of the whole conversation serialized, at every length', () => {
    const messages = conversation()
    for (let length = 0; length <= messages.length; length++) {
      const part = messages.slice(0, length)
      assert.equal(conversationTokens(part), estimateTokens(JSON.stringify(part)), `${length}`)
    }
  })

  it('measures each message once: a message seen before is not serialized again', () => {
    const messages = conversation()
    conversationTokens(messages)
    const stringify = JSON.stringify
    let calls = 0
    JSON.stringify = ((...args: Parameters<typeof stringify>) => {
      calls++
      return stringify(...args)
    }) as typeof stringify
    try {
      const grown = [...messages, { role: 'user', content: 'And the next?' } as ModelMessage]
      assert.equal(conversationTokens(grown), estimateTokens(stringify(grown)))
      assert.equal(calls, 1, 'only the new message was serialized')
    } finally {
      JSON.stringify = stringify
    }
  })
})
