/**
 * @module store/contract/trace-contract
 * The contract of Run metrics and chat messages: durable, keyed by Run and chat, and kept when
 * the Run's world (its line) is discarded.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { openStore } from '../open-store.ts'
import type { RunMetrics } from '../run-trace.ts'
import { freshStore, testDependencies, type StoreHarness } from './store-harness.ts'
import { rejectsWith } from './task-contract.ts'

const METRICS: RunMetrics = {
  provider: 'local',
  model: 'stub-1',
  inputsId: 'sha256:abc',
  modelSteps: 1,
  inputTokens: 10,
  outputTokens: 4,
  cachedInputTokens: 0,
  dollars: 0.000018,
  steps: [
    {
      step: 0,
      finishReason: 'stop',
      toolCalls: [],
      inputTokens: 10,
      outputTokens: 4,
      cachedInputTokens: 0,
      dollars: 0.000018,
    },
  ],
}

/** Registers the trace contract. */
export function traceContract(harness: StoreHarness): void {
  void describe('run traces', () => {
    void it('keeps a Run metrics, replaced by each write, across a reopen', async () => {
      const { store, url } = await freshStore(harness)
      await store.admitRun({ id: 'run-1' })
      assert.equal(await store.getRunMetrics('run-1'), undefined)
      await store.recordRunMetrics('run-1', { ...METRICS, modelSteps: 0, steps: [] })
      await store.recordRunMetrics('run-1', METRICS)
      await store.close()
      const again = await openStore(url, { dependencies: testDependencies() })
      assert.deepEqual(await again.getRunMetrics('run-1'), METRICS)
      await rejectsWith(again.recordRunMetrics('nobody', METRICS), 'not_found')
      await again.close()
    })

    void it('appends chat messages in order, per chat, and keeps them after the line is discarded', async () => {
      const { store } = await freshStore(harness)
      await store.forkLine('main', 'world-1')
      await store.admitRun({ id: 'run-1', world: 'world-1' })
      await store.admitRun({ id: 'run-2' })
      const first = await store.appendChatMessages('chat-1', 'run-1', [
        { role: 'system', content: 'You are a model.' },
        { role: 'user', content: 'add 1 and 1' },
      ])
      assert.deepEqual(
        first.map((message) => [message.sequence, message.role]),
        [
          [1, 'system'],
          [2, 'user'],
        ],
      )
      const tool = [{ type: 'tool-call', toolCallId: 'c1', toolName: 'add', input: { a: 1 } }]
      await store.appendChatMessages('chat-1', 'run-1', [{ role: 'assistant', content: tool }])
      await store.appendChatMessages('chat-2', 'run-2', [{ role: 'user', content: 'other' }])
      await store.discardLine('world-1')
      const kept = await store.listChatMessages('chat-1')
      assert.deepEqual(
        kept.map((message) => [message.sequence, message.role, message.content, message.runId]),
        [
          [1, 'system', 'You are a model.', 'run-1'],
          [2, 'user', 'add 1 and 1', 'run-1'],
          [3, 'assistant', tool, 'run-1'],
        ],
      )
      assert.equal((await store.listChatMessages('chat-2')).length, 1)
      assert.deepEqual(await store.listChatMessages('chat-none'), [])
      await rejectsWith(
        store.appendChatMessages('chat-1', 'run-2', [{ role: 'user', content: 'x' }]),
        'conflict',
      )
      await rejectsWith(
        store.appendChatMessages('chat-3', 'nobody', [{ role: 'user', content: 'x' }]),
        'not_found',
      )
      await rejectsWith(
        store.appendChatMessages('chat-1', 'run-1', [{ role: '', content: 'x' }]),
        'invalid_input',
      )
      await store.close()
    })
    void it('writes a step (events, chat, metrics) in one transaction, all or none', async () => {
      const { store, url } = await freshStore(harness)
      await store.admitRun({ id: 'run-1' })
      await store.admitRun({ id: 'run-2' })
      await store.appendRunEvents('run-1', [{ type: 'model-call-intent', data: { step: 0 } }])
      const written = await store.appendRunStep('run-1', {
        events: [
          { type: 'model-call-result', data: { step: 0 } },
          { type: 'tool-call-intent', data: { step: 0, name: 'add' } },
        ],
        chat: { chatId: 'chat-1', messages: [{ role: 'assistant', content: 'calling add' }] },
        metrics: METRICS,
      })
      assert.deepEqual(
        written.events.map((event) => [event.sequence, event.type]),
        [
          [2, 'model-call-result'],
          [3, 'tool-call-intent'],
        ],
      )
      assert.deepEqual(
        written.messages.map((message) => [message.sequence, message.role]),
        [[1, 'assistant']],
      )
      // Each part is optional.
      await store.appendRunStep('run-1', { events: [{ type: 'tool-call-result' }] })
      await store.appendRunStep('run-1', {
        chat: { chatId: 'chat-1', messages: [{ role: 'tool', content: '2' }] },
      })
      await store.appendRunStep('run-2', {
        chat: { chatId: 'chat-2', messages: [{ role: 'user', content: 'other' }] },
      })
      const journal = async (id: string) =>
        (await store.listRunEvents(id)).map((event) => event.type)
      const before = await journal('run-1')
      // A step whose chat is another Run's fails whole: its events and metrics are not written.
      await rejectsWith(
        store.appendRunStep('run-1', {
          events: [{ type: 'model-call-result', data: { step: 1 } }],
          chat: { chatId: 'chat-2', messages: [{ role: 'assistant', content: 'x' }] },
          metrics: { ...METRICS, modelSteps: 2 },
        }),
        'conflict',
      )
      assert.deepEqual(await journal('run-1'), before)
      assert.deepEqual(await store.getRunMetrics('run-1'), METRICS)
      assert.equal((await store.listChatMessages('chat-2')).length, 1)
      await rejectsWith(
        store.appendRunStep('nobody', { events: [{ type: 'model-call-result' }] }),
        'not_found',
      )
      await rejectsWith(
        store.appendRunStep('run-1', {
          events: [{ type: 'model-call-result' }],
          chat: { chatId: 'chat-1', messages: [{ role: '', content: 'x' }] },
        }),
        'invalid_input',
      )
      await rejectsWith(store.appendRunStep('run-1', { events: [{ type: '' }] }), 'invalid_input')
      // Positive control: the refused step, with the Run's own chat, lands.
      await store.appendRunStep('run-1', {
        events: [{ type: 'model-call-result', data: { step: 1 } }],
        chat: { chatId: 'chat-1', messages: [{ role: 'assistant', content: 'done' }] },
        metrics: { ...METRICS, modelSteps: 2 },
      })
      await store.close()
      const again = await openStore(url, { dependencies: testDependencies() })
      assert.deepEqual(
        (await again.listRunEvents('run-1')).map((event) => event.type),
        [...before, 'model-call-result'],
      )
      assert.deepEqual(
        (await again.listChatMessages('chat-1')).map((message) => message.content),
        ['calling add', '2', 'done'],
      )
      assert.equal((await again.getRunMetrics('run-1'))?.modelSteps, 2)
      await again.close()
    })
  })
}
