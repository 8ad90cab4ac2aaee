import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { createRenderer } from './render.ts'

const render = createRenderer({ maxChars: 1_000, maxDepth: 2, maxItems: 5, maxStringChars: 20 })

describe('createRenderer', () => {
  it('renders values like a REPL, strings raw at the top', () => {
    const cases: [unknown, string][] = [
      [1, '1'],
      [-0, '-0'],
      [2n, '2n'],
      [null, 'null'],
      [undefined, 'undefined'],
      [Symbol('s'), 'Symbol(s)'],
      [[1, 'a'], '[ 1, "a" ]'],
      [{ a: { b: { c: { d: 1 } } } }, '{ a: { b: { c: [Object] } } }'],
      [new Set([1]), 'Set(1) { 1 }'],
      [new Date(0), '1970-01-01T00:00:00.000Z'],
      [/x/g, '/x/g'],
      [new Uint8Array([1, 2]), 'Uint8Array(2) [ 1, 2 ]'],
      [function named() {}, '[Function: named]'],
      [class Thing {}, '[class Thing]'],
      [new RangeError('r'), 'RangeError: r'],
    ]
    for (const [value, shown] of cases) assert.equal(render(value, false), shown)
    assert.equal(render('raw', true), 'raw')
    assert.equal(render('quoted', false), '"quoted"')
  })

  it('never runs a getter or an inspect hook', () => {
    let ran = false
    const value = {
      get secret() {
        ran = true
        return 1
      },
      [Symbol.for('nodejs.util.inspect.custom')]: () => {
        ran = true
        return 'hooked'
      },
    }
    assert.match(render(value, false), /secret: \[Getter\]/)
    assert.equal(ran, false)
  })

  it('bounds items, strings, depth and the whole rendering', () => {
    assert.match(
      render(
        Array.from({ length: 10 }, (_, i) => i),
        false,
      ),
      /… 5 more items/,
    )
    assert.match(render(['y'.repeat(100)], false), /more characters/)
    const wide = Object.fromEntries(Array.from({ length: 5 }, (_, i) => [`k${i}`, 'v'.repeat(20)]))
    const nested = Array.from({ length: 5 }, () => Array.from({ length: 5 }, () => wide))
    assert.ok(render(nested, false).length <= 1_100)
    assert.match(render('z'.repeat(5_000), true), /truncated: 4000 more characters/)
  })

  it('keeps working when the guest replaces built-ins after it was made', () => {
    const join = Array.prototype.join
    try {
      Array.prototype.join = () => 'hijacked'
      assert.equal(render([1, 2], false), '[ 1, 2 ]')
    } finally {
      Array.prototype.join = join
    }
  })
})
