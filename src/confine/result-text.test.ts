import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { capBytes, resultBody } from './result-text.ts'

describe('resultBody', () => {
  it('falls back to the printed output when the result is empty', () => {
    assert.equal(resultBody(undefined, 'printed'), 'printed')
    assert.equal(resultBody('', 'printed'), 'printed')
    assert.equal(resultBody('answer', 'printed'), 'answer')
    assert.equal(resultBody(null, ''), '')
  })

  it('prints what JSON cannot hold', () => {
    const cyclic: Record<string, unknown> = { a: 1 }
    cyclic['self'] = cyclic
    assert.match(resultBody(cyclic, ''), /a: 1/)
    assert.equal(resultBody(10n, ''), '10n')
  })
})

describe('capBytes', () => {
  it('never splits a character', () => {
    assert.deepEqual(capBytes('😀😀', 5), {
      text: '😀 ...[truncated to 5 bytes]',
      bytes: 8,
      truncated: true,
    })
    assert.deepEqual(capBytes('abc', 3), { text: 'abc', bytes: 3, truncated: false })
  })
})
