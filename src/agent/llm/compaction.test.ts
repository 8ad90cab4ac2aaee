import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { LanguageModelV4CallOptions } from '@ai-sdk/provider'
import type { ModelCatalog } from '../../provider/model-catalog.ts'
import { runChatId } from './chat-id.ts'
import { PRUNED_OUTPUT, SUMMARY_SYSTEM } from './compaction.ts'
import {
  answers,
  callsTool,
  llmFixture,
  llmTeam,
  scriptedModel,
  TEST_PRICE,
  usage,
  type FixtureTool,
} from './test-llm-fixture.ts'

/** A tool answering 1,500 characters (about 500 tokens) naming its call. */
const BIG: FixtureTool = {
  call: async (input) => ({
    type: 'success',
    content: `output ${(input as { n: number }).n}: ${'x'.repeat(1500)}`,
    metadata: {},
  }),
}

function team(program: Record<string, unknown> = {}) {
  return llmTeam('reader', program)
}

/** A model calling `big` `calls` times, then answering. */
function reader(calls: number) {
  let step = 0
  return scriptedModel([
    () =>
      step < calls
        ? callsTool([{ name: 'big', input: { n: step++ } }], usage(100, 10))
        : answers('read everything'),
  ])
}

function catalogOf(window: number, models: Record<string, ReturnType<typeof scriptedModel>>) {
  return {
    describe: (policy) => ({
      ref: `${policy.provider}:${policy.model}`,
      price: TEST_PRICE,
      contextWindow: window,
    }),
    resolve: (policy) => ({
      ref: `${policy.provider}:${policy.model}`,
      model: models[policy.model] as ReturnType<typeof scriptedModel>,
      price: TEST_PRICE,
      contextWindow: window,
    }),
  } satisfies ModelCatalog
}

/** The tool outputs a model call was sent, in order. */
function toolOutputs(call: LanguageModelV4CallOptions): string[] {
  return call.prompt
    .filter((message) => message.role === 'tool')
    .flatMap((message) =>
      message.content.map((part) =>
        part.type === 'tool-result' && part.output.type === 'text' ? part.output.value : '?',
      ),
    )
}

describe('compaction', () => {
  it('prunes old tool outputs past 70% of the window, keeping the last two turns whole', async (t) => {
    const model = reader(3)
    const { runtime, store } = await llmFixture(t, catalogOf(2600, { 'stub-1': model }), {
      big: BIG,
    })
    const handle = await runtime.hire(team(), 'reader', { task: 'read' })
    assert.equal((await handle.result()).status, 'completed')
    const last = model.doGenerateCalls.at(-1) as LanguageModelV4CallOptions
    const outputs = toolOutputs(last)
    assert.equal(outputs.length, 3)
    assert.equal(outputs[0], PRUNED_OUTPUT)
    assert.match(outputs[1] ?? '', /^output 1: x{1500}$/)
    assert.match(outputs[2] ?? '', /^output 2: x{1500}$/)
    const types = (await store.listRunEvents(handle.id)).map((event) => event.type)
    assert.ok(types.includes('compaction'))
    assert.ok(!types.includes('compaction-intent'))
    // The chat keeps every output as it was.
    const chat = await store.listChatMessages(runChatId(handle.id))
    assert.ok(!JSON.stringify(chat).includes(PRUNED_OUTPUT))
  })

  it('summarises the history when pruning is not enough, with the compaction model', async (t) => {
    const model = reader(3)
    const summariser = scriptedModel([() => answers('Read outputs 0 and 1.', usage(300, 20))])
    const { runtime, store } = await llmFixture(
      t,
      catalogOf(1200, { 'stub-1': model, summariser }),
      { big: BIG },
    )
    const handle = await runtime.hire(team({ compactionModel: 'local:summariser' }), 'reader', {
      task: 'read',
    })
    assert.equal((await handle.result()).status, 'completed')
    assert.equal(summariser.doGenerateCalls.length, 1)
    const asked = summariser.doGenerateCalls[0] as LanguageModelV4CallOptions
    assert.equal(asked.prompt[0]?.content, SUMMARY_SYSTEM)
    assert.equal(asked.tools, undefined)
    const last = model.doGenerateCalls.at(-1) as LanguageModelV4CallOptions
    const first = last.prompt[1]
    assert.equal(first?.role, 'user')
    assert.match(
      JSON.stringify(first?.content),
      /read\\n\\n\[Summary of your earlier work.*Read outputs 0 and 1\./,
    )
    // The last two turns stay whole; the summarised one is gone from what the model is sent.
    assert.deepEqual(
      toolOutputs(last).map((output) => output.slice(0, 8)),
      ['output 1', 'output 2'],
    )
    const chat = await store.listChatMessages(runChatId(handle.id))
    assert.ok(chat.some((message) => message.role === 'summary'))
    const metrics = await store.getRunMetrics(handle.id)
    assert.equal(metrics?.modelSteps, 4)
    assert.equal(metrics?.inputTokens, 4 * 100 - 100 + 120 + 300)
  })

  it('does not compact when autoCompact is false', async (t) => {
    const model = reader(3)
    const { runtime } = await llmFixture(t, catalogOf(2600, { 'stub-1': model }), { big: BIG })
    const handle = await runtime.hire(team({ autoCompact: false }), 'reader', { task: 'read' })
    assert.equal((await handle.result()).status, 'completed')
    const outputs = toolOutputs(model.doGenerateCalls.at(-1) as LanguageModelV4CallOptions)
    assert.ok(outputs.every((output) => output !== PRUNED_OUTPUT))
  })
})
