import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { MAX_JSON_DEPTH } from '../eval/eval-limits.ts'
import { canonicalJson } from './canonical-json.ts'
import { findNonPlainData, MAX_PLAIN_DATA_VALUES } from './plain-data.ts'

describe('findNonPlainData', () => {
  it('accepts JSON data of every kind', () => {
    assert.equal(findNonPlainData({ a: [1, 'two', true, null, { b: -0.5 }], c: {} }), undefined)
    assert.equal(findNonPlainData('text'), undefined)
  })

  it('reports a cycle through the top, and the first problem in reading order', () => {
    const top: unknown[] = []
    top.push(top)
    assert.deepEqual(findNonPlainData(top), {
      path: [0],
      reason:
        'refers back to the value itself (a cycle); JSON data is a tree, so write the value out instead',
    })
    assert.deepEqual(findNonPlainData({ a: 1, b: undefined, c: () => 1 })?.path, ['b'])
  })

  it('refuses an Array subclass and a value nested too deep', () => {
    class List extends Array<number> {}
    assert.match(findNonPlainData({ list: new List() })?.reason ?? '', /Array subclass/)
    let deep: unknown = 1
    for (let level = 0; level <= MAX_JSON_DEPTH; level++) deep = [deep]
    assert.match(findNonPlainData(deep)?.reason ?? '', /nested deeper than 64 levels/)
  })

  it('stays cheap when branches share one object many times over', () => {
    // 2^40 paths through 40 shared arrays: walking every path would never end.
    let shared: unknown = 1
    for (let level = 0; level < 40; level++) shared = [shared, shared]
    const started = performance.now()
    assert.match(
      findNonPlainData(shared)?.reason ?? '',
      new RegExp(`more than ${MAX_PLAIN_DATA_VALUES} values`),
    )
    assert.ok(performance.now() - started < 10_000)
  })
})

describe('canonicalJson', () => {
  it('sorts keys at every depth and keeps array order', () => {
    assert.equal(
      canonicalJson({ b: 1, a: [{ d: 2, c: 3 }, 'x'] }),
      '{"a":[{"c":3,"d":2},"x"],"b":1}',
    )
  })
})
