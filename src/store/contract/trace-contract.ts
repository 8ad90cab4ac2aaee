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
  })
}
