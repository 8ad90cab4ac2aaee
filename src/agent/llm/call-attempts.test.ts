/**
 * The AI SDK's own retries of a failed model call (call-attempts.ts): each retry reserves as
 * much again as the call, a failed attempt counts as spent, and a retry the Run's budget cannot
 * cover is not made.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { APICallError } from '@ai-sdk/provider'
import {
  answers,
  fixedCatalog,
  llmFixture,
  llmTeam,
  scriptedModel,
  usage,
  type ModelStep,
} from './test-llm-fixture.ts'

/** A step that fails as a provider's 500 does, retryable at once. */
const serverError: ModelStep = () => {
  throw new APICallError({
    message: 'Internal Server Error',
    url: 'http://127.0.0.1/v1/chat/completions',
    requestBodyValues: {},
    statusCode: 500,
    // Retried after 1 ms rather than the SDK's two seconds.
    responseHeaders: { 'retry-after-ms': '1' },
    isRetryable: true,
  })
}

describe("a model call's retries", () => {
  it('reserve again, and the failed attempt is charged as reserved', async (t) => {
    const model = scriptedModel([serverError, () => answers('done', usage(100, 5))])
    const { runtime, store } = await llmFixture(t, fixedCatalog(model))
    const handle = await runtime.hire(llmTeam('agent', { budgetDollars: 1 }), 'agent', {
      task: 'answer',
    })
    assert.equal((await handle.result()).status, 'completed')
    assert.equal(model.doGenerateCalls.length, 2)
    const events = await store.listRunEvents(handle.id)
    const intent = events.find((event) => event.type === 'model-call-intent')
    const reserved = (intent?.data as { reservedDollars: number }).reservedDollars
    const result = events.find((event) => event.type === 'model-call-result')?.data as {
      retries?: number
      retriedDollars?: number
      dollars: number
    }
    assert.equal(result.retries, 1)
    assert.equal(result.retriedDollars, reserved)
    const answered = (100 * 1 + 5 * 2) / 1e6
    assert.ok(Math.abs(result.dollars - (reserved + answered)) < 1e-12)
    const metrics = await store.getRunMetrics(handle.id)
    assert.ok(metrics !== undefined && Math.abs(metrics.dollars - (reserved + answered)) < 1e-12)
  })

  it('are not made past the budget: the call fails with why, after one attempt', async (t) => {
    // $0.01 covers one reservation (4,096 output tokens at $2 a million, and the prompt), not two.
    const model = scriptedModel([serverError, () => answers('never')])
    const { runtime, store } = await llmFixture(t, fixedCatalog(model))
    const handle = await runtime.hire(llmTeam('agent', { budgetDollars: 0.01 }), 'agent', {
      task: 'answer',
    })
    const result = await handle.result()
    assert.equal(result.status, 'failed')
    assert.equal(model.doGenerateCalls.length, 1)
    const events = await store.listRunEvents(handle.id)
    const failure = events.find((event) => event.type === 'model-call-result')?.data as {
      error: string
    }
    assert.match(failure.error, /not retried: another attempt needs \$[\d.]+ reserved/)
  })
})
