import assert from 'node:assert/strict'
import { it } from 'node:test'
import { isWithin, isWithinAny } from './relative-paths.ts'

it('compares whole components; the empty folder holds everything', () => {
  assert.equal(isWithin('src/a.ts', 'src'), true)
  assert.equal(isWithin('src', 'src'), true)
  assert.equal(isWithin('srcx/a.ts', 'src'), false)
  assert.equal(isWithin('sr', 'src'), false)
  assert.equal(isWithin('anything/at/all', ''), true)
  assert.equal(isWithin('/etc/passwd', '/etc'), true)
  assert.equal(isWithin('/etcx', '/etc'), false)
  assert.equal(isWithinAny('a/b/c', ['x', 'a/b']), true)
  assert.equal(isWithinAny('a/bc', ['x', 'a/b']), false)
})
