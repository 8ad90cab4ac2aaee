/**
 * Usage a provider reports is a number the Run's budget rests on: a count that is not a whole
 * number of tokens (negative, fractional, not finite) is charged as a missing one (the
 * estimate, the whole output allowance), and cached input never passes the input.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { LanguageModelV4GenerateResult } from '@ai-sdk/provider'
import { answers, fixedCatalog, llmFixture, llmTeam, scriptedModel } from './test-llm-fixture.ts'

/** Usage with the counts given, as a provider might send them. */
function reported(
  input: number,
  output: number,
  cached = 0,
): LanguageModelV4GenerateResult['usage'] {
  return {
    inputTokens: { total: input, noCache: input - cached, cacheRead: cached, cacheWrite: 0 },
    outputTokens: { total: output, text: output, reasoning: 0 },
  }
}

async function spentOn(
  t: Parameters<typeof llmFixture>[0],
  used: LanguageModelV4GenerateResult['usage'],
) {
  const model = scriptedModel([() => answers('done', used)])
  const { runtime, store } = await llmFixture(t, fixedCatalog(model))
  const handle = await runtime.hire(llmTeam('agent', { budgetDollars: 1 }), 'agent', {
    task: 'answer',
  })
  assert.equal((await handle.result()).status, 'completed')
  const metrics = await store.getRunMetrics(handle.id)
  assert.ok(metrics !== undefined)
  return metrics
}

describe("a provider's reported usage", () => {
  it('is charged as given when it is whole token counts (the control)', async (t) => {
    const metrics = await spentOn(t, reported(1000, 10))
    assert.equal(metrics.inputTokens, 1000)
    assert.ok(Math.abs(metrics.dollars - (1000 * 1 + 10 * 2) / 1e6) < 1e-12)
  })

  it('never lowers what was spent: a negative or fractional count is charged as missing', async (t) => {
    for (const used of [reported(-1_000_000, 10), reported(100.5, -3), reported(NaN, 10)]) {
      const metrics = await spentOn(t, used)
      assert.ok(metrics.inputTokens >= 0 && Number.isInteger(metrics.inputTokens))
      assert.ok(metrics.outputTokens >= 0 && Number.isInteger(metrics.outputTokens))
      assert.ok(metrics.dollars > 0, `charged ${metrics.dollars} for ${JSON.stringify(used)}`)
    }
  })

  it('counts cached input at most as the whole input', async (t) => {
    const metrics = await spentOn(t, reported(100, 10, 5000))
    assert.ok(metrics.cachedInputTokens <= metrics.inputTokens)
  })
})
