import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { INPUT_EXCERPT_CHARS, inputExcerpt } from './input-excerpt.ts'

describe('inputExcerpt', () => {
  it('keeps a short input whole and cuts a long one to its start and length', () => {
    assert.equal(inputExcerpt('notes.md'), 'notes.md')
    assert.equal(inputExcerpt('a'.repeat(INPUT_EXCERPT_CHARS)), 'a'.repeat(INPUT_EXCERPT_CHARS))
    assert.equal(inputExcerpt('abcdef', 3), 'abc… (6 characters in all)')
  })

  it('never ends on half a surrogate pair', () => {
    assert.equal(inputExcerpt('ab😀cd', 3), 'ab… (6 characters in all)')
  })
})
