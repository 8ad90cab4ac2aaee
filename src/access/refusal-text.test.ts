import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { refusedText } from './refusal-text.ts'

describe('refusedText', () => {
  it('ends a refusal with one full stop, whether or not the reason brought its own', () => {
    assert.equal(
      refusedText('a person did not approve it (the person chose decline).'),
      'Refused: a person did not approve it (the person chose decline).',
    )
    assert.equal(refusedText('outside the workspace'), 'Refused: outside the workspace.')
    assert.equal(refusedText('is it allowed?'), 'Refused: is it allowed?')
  })
})
