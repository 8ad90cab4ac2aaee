/**
 * The provider adapters against a fake model API on loopback that speaks the OpenAI
 * chat-completions and Anthropic messages wire formats: what the resolved models send (key,
 * usage request) and how the AI SDK meets answers, tool calls, streams, a 429, a 500 and a
 * connection cut mid-stream. No network, no real key.
 */
import { createOpenAICompatible } from '@ai-sdk/openai-compatible'
import { generateText, streamText, tool } from 'ai'
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { z } from 'zod'
import type { ProviderType } from '../config/models-config.ts'
import {
  startModelWireServer,
  type ModelWireServer,
  type WireReply,
} from '../../test/helpers/model-wire-server.ts'
import { createModelCatalog } from './create-model-catalog.ts'
import { failure, shown } from './test-errors.ts'

// The SDK's compatibility warnings (an unknown model's output cap) would only clutter the output.
globalThis.AI_SDK_LOG_WARNINGS = false

const KEY = 'sk-wire-7c4f21e9-must-not-leak'
const PROMPT = 'prompt-marker-31337: say hello'

const readFile = tool({
  description: 'Reads a file of the workspace.',
  inputSchema: z.object({ path: z.string() }),
  execute: ({ path }) => `contents of ${path}`,
})

/** The three provider types, each with the header its key travels in. */
const FORMATS: readonly { type: ProviderType; keyHeader: string; keyValue: string }[] = [
  { type: 'openai', keyHeader: 'authorization', keyValue: `Bearer ${KEY}` },
  { type: 'openai-compatible', keyHeader: 'authorization', keyValue: `Bearer ${KEY}` },
  { type: 'anthropic', keyHeader: 'x-api-key', keyValue: KEY },
]

async function withModel(
  type: ProviderType,
  replies: readonly WireReply[],
  use: (model: ReturnType<typeof resolve>['model'], server: ModelWireServer) => Promise<void>,
): Promise<void> {
  await using server = await startModelWireServer(replies)
  await use(resolve(type, server).model, server)
}

function resolve(type: ProviderType, server: ModelWireServer) {
  const catalog = createModelCatalog({
    providers: {
      wire: {
        type,
        baseURL: type === 'anthropic' ? server.anthropicURL : server.openaiURL,
        apiKeyEnv: 'WIRE_KEY',
      },
    },
    env: { WIRE_KEY: KEY },
  })
  return catalog.resolve({ provider: 'wire', model: 'stub-1' })
}

for (const { type, keyHeader, keyValue } of FORMATS) {
  describe(`the ${type} adapter on the wire`, () => {
    it('answers a plain prompt, sending the key from the environment in its header', async () => {
      await withModel(type, [{ kind: 'text', text: 'Hello there' }], async (model, server) => {
        const result = await generateText({ model, prompt: PROMPT })
        assert.equal(result.text, 'Hello there')
        assert.equal(result.usage.inputTokens, 11)
        assert.equal(result.usage.outputTokens, 7)
        const [request] = server.requests
        assert.equal(request?.headers[keyHeader], keyValue)
        assert.equal(request?.body['model'], 'stub-1')
        assert.match(JSON.stringify(request?.body), /prompt-marker-31337/)
      })
    })

    it('reads a tool call with its input', async () => {
      await withModel(
        type,
        [{ kind: 'tool-call', name: 'read_file', input: { path: 'src/a.ts' } }],
        async (model, server) => {
          const result = await generateText({
            model,
            prompt: PROMPT,
            tools: { read_file: readFile },
          })
          assert.equal(result.finishReason, 'tool-calls')
          assert.deepEqual(
            result.toolCalls.map((call) => [call.toolName, call.input]),
            [['read_file', { path: 'src/a.ts' }]],
          )
          // The tool was offered with its schema.
          assert.match(JSON.stringify(server.requests[0]?.body['tools']), /read_file/)
        },
      )
    })

    it('streams text and a tool call, with usage (cached input included)', async () => {
      await withModel(
        type,
        [
          {
            kind: 'text',
            text: 'Streamed answer',
            usage: { input: 20, output: 5, cachedInput: 4 },
          },
          { kind: 'tool-call', name: 'read_file', input: { path: 'b.txt' } },
        ],
        async (model, server) => {
          const text = streamText({ model, prompt: PROMPT })
          let streamed = ''
          for await (const piece of text.textStream) streamed += piece
          assert.equal(streamed, 'Streamed answer')
          const usage = await text.usage
          assert.equal(usage.inputTokens, 20)
          assert.equal(usage.outputTokens, 5)
          assert.equal(usage.inputTokenDetails.cacheReadTokens, 4)
          const call = streamText({ model, prompt: PROMPT, tools: { read_file: readFile } })
          assert.deepEqual(
            (await call.toolCalls).map((part) => [part.toolName, part.input]),
            [['read_file', { path: 'b.txt' }]],
          )
          assert.equal(server.requests[0]?.body['stream'], true)
          if (type !== 'anthropic') {
            // OpenAI-style servers send a stream's usage only when asked.
            assert.deepEqual(server.requests[0]?.body['stream_options'], { include_usage: true })
          }
        },
      )
    })

    it('waits as long as a 429 says in retry-after, then retries', async () => {
      await withModel(
        type,
        [
          { kind: 'status', status: 429, headers: { 'retry-after': '0.5' } },
          { kind: 'status', status: 429, headers: { 'retry-after': '1.2' } },
          { kind: 'text', text: 'after the wait' },
        ],
        async (model, server) => {
          const result = await generateText({ model, prompt: PROMPT })
          assert.equal(result.text, 'after the wait')
          const [first, second, third] = server.requests.map((request) => request.at)
          assert.ok(first !== undefined && second !== undefined && third !== undefined)
          // Each wait follows its header; without one the SDK's backoff would wait 2 s, then 4 s
          // (the upper bounds leave room for a loaded machine).
          assert.ok(second - first >= 490 && second - first < 1_900, `waited ${second - first} ms`)
          assert.ok(
            third - second >= 1_190 && third - second < 3_000,
            `waited ${third - second} ms`,
          )
        },
      )
    })

    it('fails on a 500 with the status, the key in no error', async () => {
      await withModel(
        type,
        [{ kind: 'status', status: 500, message: 'the model server fell over' }],
        async (model, server) => {
          const error = await failure(() => generateText({ model, prompt: PROMPT, maxRetries: 0 }))
          assert.equal((error as { statusCode?: number }).statusCode, 500)
          assert.match(String(error), /the model server fell over/)
          assert.equal(server.requests.length, 1)
          // The control: the inspection shows what the request carried (its prompt)…
          assert.match(shown(error), /prompt-marker-31337/)
          // …and not the key that went with it.
          assert.equal(server.requests[0]?.headers[keyHeader], keyValue)
          assert.doesNotMatch(shown(error), new RegExp(KEY))
        },
      )
    })

    it('retries a 500 as it does a 429 (the SDK counts both as passing)', async () => {
      await withModel(
        type,
        [
          { kind: 'status', status: 500, headers: { 'retry-after-ms': '20' } },
          { kind: 'text', text: 'second try' },
        ],
        async (model, server) => {
          assert.equal((await generateText({ model, prompt: PROMPT })).text, 'second try')
          assert.equal(server.requests.length, 2)
        },
      )
    })

    it(
      'fails clearly, without hanging or retrying, when the connection drops mid-stream',
      { timeout: 10_000 },
      async () => {
        await withModel(
          type,
          [{ kind: 'drop-mid-stream', text: 'this answer is cut short', afterChunks: 3 }],
          async (model, server) => {
            const stream = streamText({ model, prompt: PROMPT })
            let streamed = ''
            const error = await failure(async () => {
              for await (const piece of stream.textStream) streamed += piece
            })
            // Some text arrived before the cut, and the error says the answer broke off.
            assert.ok(
              streamed.length > 0 && 'this answer is cut short'.startsWith(streamed),
              streamed,
            )
            assert.match(shown(error), /terminated|other side closed|socket/i)
            assert.doesNotMatch(shown(error), new RegExp(KEY))
            assert.equal(server.requests.length, 1)
          },
        )
      },
    )
  })
}

describe('usage in an OpenAI-compatible stream', () => {
  it('is missing when the adapter does not ask for it: the control for includeUsage', async () => {
    await using server = await startModelWireServer([
      { kind: 'text', text: 'no usage', usage: { input: 20, output: 5 } },
    ])
    const bare = createOpenAICompatible({ name: 'bare', baseURL: server.openaiURL })
    const result = streamText({ model: bare.chatModel('stub-1'), prompt: PROMPT })
    assert.equal(await result.text, 'no usage')
    assert.equal((await result.usage).inputTokens, undefined)
    assert.equal(server.requests[0]?.body['stream_options'], undefined)
  })
})
