import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { parsePlainJson } from './plain-json.ts'

describe('parsePlainJson', () => {
  it('parses plain JSON', () => {
    assert.deepEqual(parsePlainJson('[1, {"a": [true, null]}]'), {
      ok: true,
      value: [1, { a: [true, null] }],
    })
  })

  it('refuses keys that reach a prototype, at any depth', () => {
    for (const key of ['__proto__', 'constructor', 'prototype']) {
      const parsed = parsePlainJson(`[{"ok": {"${key}": {"polluted": true}}}]`)
      assert.deepEqual(parsed, { ok: false, message: `the key "${key}" is refused (at [0].ok)` })
    }
    assert.equal(({} as Record<string, unknown>)['polluted'], undefined)
  })

  it('refuses nesting bombs without overflowing the stack', () => {
    const bomb = `${'['.repeat(100_000)}${']'.repeat(100_000)}`
    const parsed = parsePlainJson(bomb)
    assert.equal(parsed.ok, false)
    assert.match(parsed.ok ? '' : parsed.message, /nested deeper than 64 levels/)
  })

  it('refuses what is not JSON', () => {
    assert.equal(parsePlainJson('{oops').ok, false)
  })
})
