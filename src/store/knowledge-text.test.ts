import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { mentionedTitles, queryTerms, tidyTitle, titleKey } from './knowledge-text.ts'

describe('knowledge text', () => {
  it('tidies titles and keys them without case or spacing', () => {
    assert.equal(tidyTitle('  Store \n design '), 'Store design')
    assert.equal(titleKey('Store  DESIGN'), titleKey('store design'))
  })

  it('finds [[mentions]] once each, in order, with aliases dropped', () => {
    assert.deepEqual(
      mentionedTitles('[[A]] then [[b|the b]], [[ a ]], [[]] and [[C\nD]] and [[E]]'),
      ['A', 'b', 'E'],
    )
  })

  it('keeps letters and digits, drops stop words and repeats', () => {
    assert.deepEqual(queryTerms('The "SQLite" AND (sqlite) v3.53 — café!'), [
      'sqlite',
      'v3',
      '53',
      'café',
    ])
    assert.deepEqual(queryTerms('the and or'), [])
  })
})
