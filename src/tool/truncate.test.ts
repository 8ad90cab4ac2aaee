import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { toolError, toolSuccess } from './tool-result.ts'
import { CHARS_PER_TOKEN, estimateTokens, MAX_RESULT_TOKENS, truncateResult } from './truncate.ts'

const BUDGET_CHARS = MAX_RESULT_TOKENS * CHARS_PER_TOKEN

describe('truncateResult', () => {
  it('leaves a result within budget unchanged', () => {
    const result = toolSuccess('x'.repeat(BUDGET_CHARS), { a: 1 })
    assert.equal(truncateResult(result), result)
  })

  it('keeps the first 40% and the last 60% of the budget around one marker line', () => {
    const head = 'H'.repeat(30_000)
    const middle = 'M'.repeat(100_000)
    const tail = 'T'.repeat(40_000)
    const result = truncateResult(toolSuccess(head + middle + tail, { kept: 'yes' }))
    const lines = result.content.split('\n')
    assert.equal(lines.length, 3)
    const [first, marker, last] = lines as [string, string, string]
    assert.equal(first, 'H'.repeat(BUDGET_CHARS * 0.4))
    assert.match(marker, /OUTPUT TRUNCATED/)
    assert.match(marker, /removed \d+ tokens \(\d+ characters\)/)
    assert.ok(
      last.length > BUDGET_CHARS * 0.55 && /^T+$/.test(last.slice(-40_000)),
      'the tail is kept',
    )
    assert.ok(result.content.length <= BUDGET_CHARS, `kept ${result.content.length} characters`)
    const removed = Number(/\((\d+) characters\)/.exec(marker)?.[1])
    assert.equal(first.length + removed + last.length, 170_000)
    assert.deepEqual(result.metadata, {
      kept: 'yes',
      truncated: true,
      originalTokens: estimateTokens(head + middle + tail),
      keptTokens: estimateTokens(result.content),
    })
  })

  it('truncates error results too and keeps their code', () => {
    const result = truncateResult(toolError('tool_failed', 'e'.repeat(BUDGET_CHARS + 1)))
    assert.equal(result.type, 'error')
    assert.equal(result.type === 'error' && result.code, 'tool_failed')
    assert.equal(result.metadata['truncated'], true)
  })

  it('never splits a surrogate pair', () => {
    const result = truncateResult(toolSuccess('😀'.repeat(BUDGET_CHARS)))
    assert.doesNotMatch(
      result.content,
      /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/,
    )
  })
})
