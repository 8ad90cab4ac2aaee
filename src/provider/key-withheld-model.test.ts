/**
 * A provider that echoes the key it was sent in its error (a proxy answering 401 "invalid key:
 * Bearer sk-…", a server echoing the request's headers): the models of the catalog fail with the
 * key withheld everywhere in the error, on the real adapters against a fake model API on
 * loopback. The control: the same adapter, unwrapped, shows the key.
 */
import { createAnthropic } from '@ai-sdk/anthropic'
import { createOpenAI } from '@ai-sdk/openai'
import { createOpenAICompatible } from '@ai-sdk/openai-compatible'
import type { LanguageModelV4 } from '@ai-sdk/provider'
import { generateText, streamText } from 'ai'
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { ProviderType } from '../config/models-config.ts'
import {
  startModelWireServer,
  type ModelWireServer,
  type WireReply,
  type WireRequest,
} from '../../test/helpers/model-wire-server.ts'
import { createModelCatalog } from './create-model-catalog.ts'
import { WITHHELD_KEY } from './key-withheld-model.ts'
import { failure, shown } from './test-errors.ts'

// The SDK's compatibility warnings (an unknown model's output cap) would only clutter the output.
globalThis.AI_SDK_LOG_WARNINGS = false

const KEY = 'sk-echoed-5d1e0a77-must-not-leak'

/** A status answer whose message repeats the key header the request carried. */
const echo =
  (status: number) =>
  (request: WireRequest): WireReply => ({
    kind: 'status',
    status,
    message: `invalid key: ${String(request.headers['authorization'] ?? request.headers['x-api-key'])}`,
  })

function baseURL(type: ProviderType, server: ModelWireServer): string {
  return type === 'anthropic' ? server.anthropicURL : server.openaiURL
}

function catalogModel(type: ProviderType, server: ModelWireServer): LanguageModelV4 {
  const catalog = createModelCatalog({
    providers: { wire: { type, baseURL: baseURL(type, server), apiKeyEnv: 'OTHER_SECRET' } },
    env: { OTHER_SECRET: KEY },
  })
  return catalog.resolve({ provider: 'wire', model: 'stub-1' }).model
}

/** The adapter as the catalog builds it, without the catalog's wrapping. */
function bareModel(type: ProviderType, server: ModelWireServer): LanguageModelV4 {
  const url = baseURL(type, server)
  switch (type) {
    case 'openai':
      return createOpenAI({ baseURL: url, apiKey: KEY }).chat('stub-1')
    case 'anthropic':
      return createAnthropic({ baseURL: url, apiKey: KEY }).languageModel('stub-1')
    case 'openai-compatible':
      return createOpenAICompatible({ name: 'wire', baseURL: url, apiKey: KEY }).chatModel('stub-1')
  }
}

for (const type of ['openai', 'anthropic', 'openai-compatible'] as const) {
  describe(`a ${type} provider echoing the key in its error`, () => {
    it('shows it through the bare adapter (the control)', async () => {
      await using server = await startModelWireServer(echo(401))
      const model = bareModel(type, server)
      const error = await failure(() => generateText({ model, prompt: 'hi', maxRetries: 0 }))
      assert.match(shown(error), new RegExp(KEY))
    })

    it('fails through the catalog with the key withheld, the rest of the error kept', async () => {
      await using server = await startModelWireServer(echo(401))
      const model = catalogModel(type, server)
      const error = await failure(() => generateText({ model, prompt: 'hi', maxRetries: 0 }))
      assert.equal(server.requests.length, 1)
      assert.match(JSON.stringify(server.requests[0]?.headers), new RegExp(KEY), 'the key was sent')
      assert.equal((error as { statusCode?: number }).statusCode, 401)
      // The rest of the message is kept: it says what went wrong.
      assert.ok(String(error).includes(`invalid key: `), String(error))
      assert.ok(String(error).includes(WITHHELD_KEY), String(error))
      assert.doesNotMatch(shown(error), new RegExp(KEY))
    })

    it('withholds it from the error of every retry', async () => {
      await using server = await startModelWireServer(echo(500))
      const model = catalogModel(type, server)
      const error = await failure(() => generateText({ model, prompt: 'hi', maxRetries: 1 }))
      assert.equal(server.requests.length, 2)
      assert.match(String(error), /Failed after 2 attempts/)
      assert.doesNotMatch(shown(error), new RegExp(KEY))
    })

    it('withholds it from a stream that fails', async () => {
      await using server = await startModelWireServer(echo(401))
      const model = catalogModel(type, server)
      const errors: unknown[] = []
      const stream = streamText({
        model,
        prompt: 'hi',
        maxRetries: 0,
        onError: ({ error }) => void errors.push(error),
      })
      const error = await failure(async () => {
        for await (const _ of stream.textStream) void _
        await stream.text
      })
      assert.equal(server.requests.length, 1)
      assert.ok(errors.length > 0)
      for (const seen of [error, ...errors]) assert.doesNotMatch(shown(seen), new RegExp(KEY))
    })
  })
}
