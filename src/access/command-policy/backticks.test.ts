import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { backtickScript, backtickScripts, hasUnescapedBacktick } from './backticks.ts'

describe('backticks', () => {
  it('unescapes only what bash unescapes inside backquotes', () => {
    assert.equal(backtickScript('echo \\`id\\` \\$HOME \\\\ \\n'), 'echo `id` $HOME \\ \\n')
  })

  it('finds every backquoted script in literal text, escaped backquotes excepted', () => {
    assert.deepEqual(backtickScripts('run `npm test` then `echo \\`id\\`` but not \\`ls\\`'), [
      'npm test',
      'echo `id`',
    ])
    assert.deepEqual(backtickScripts('no backquotes'), [])
    assert.equal(backtickScripts('an ` unclosed one'), undefined)
  })

  it('tells an unescaped backquote from an escaped one', () => {
    assert.equal(hasUnescapedBacktick('a \\` b'), false)
    assert.equal(hasUnescapedBacktick('a \\\\` b'), true)
  })
})
