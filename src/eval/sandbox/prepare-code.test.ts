import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { prepareCode } from './prepare-code.ts'

function script(code: string): string {
  const prepared = prepareCode(code)
  assert.ok(prepared.ok, prepared.ok ? '' : prepared.message)
  return prepared.script
}

describe('prepareCode', () => {
  it('turns top-level declarations into assignments to globals it names for the prelude', () => {
    assert.equal(
      script('const x = 1, { a, b: [c] } = o\nlet y\nvar z\nclass K {}\nx'),
      'return $0($1, ["x","a","c","y","z","K"], async function ($0, $1) {(x = (1), { a, b: [c] } = (o));\n(y = undefined);\n(z);\nK = class K {};\n$1 = (x)\n;return $1})',
    )
  })

  it('keeps function declarations hoisted and copies them to the global object first', () => {
    assert.equal(
      script('f()\nfunction f() { return 1 }'),
      'return $0($1, ["f"], async function ($0, $1) {this.f = f;$1 = (f())\nfunction f() { return 1 }\n;return $1})',
    )
    assert.match(script("'use strict'\nfunction g() {}"), /\{'use strict'\nthis\.g = g;function g/)
  })

  it('answers the completion value: the last statement that is not a declaration, in every branch', () => {
    assert.match(script('1; const later = 2'), /\$1 = \(1\); \(later = \(2\)\)/)
    assert.match(
      script('if (a) { 1 } else { 2 }'),
      /if \(a\) \{ \$1 = \(1\) \} else \{ \$1 = \(2\) \}/,
    )
    assert.match(script('try { 1 } catch { 2 }'), /try \{ \$1 = \(1\) \} catch \{ \$1 = \(2\) \}/)
    assert.match(script("'a lone string'"), /\$1 = \('a lone string'\)/)
    assert.doesNotMatch(script('for (const i of []) { i }'), /\$1 = /)
  })

  it('keeps inner declarations local and comma initializers whole', () => {
    assert.match(script('{ const inner = 1 }'), /^return \$0\(\$1, \[\], /)
    assert.match(script('const pair = (1, 2)'), /\(pair = \(\(1, 2\)\)\);/)
  })

  it('strips TypeScript only when the code is not JavaScript, keeping lines', () => {
    assert.match(script('const n: number = 1\nn'), /\(n\s+= \(1\)\);\n\$1 = \(n\)/)
    assert.match(script('const p = 1, q = 2, r = 3\np < (q) > r'), /\$1 = \(p < \(q\) > r\)/)
  })

  it('answers a syntax error with its line and column, and says when TypeScript is not erasable', () => {
    assert.deepEqual(prepareCode('1 +'), {
      ok: false,
      message: 'SyntaxError: Unexpected token (line 1, column 4)',
    })
    const enumCode = prepareCode('enum E { A }')
    assert.ok(!enumCode.ok && /no enums or namespaces/.test(enumCode.message))
    assert.ok(!prepareCode('import fs from "node:fs"').ok)
  })

  it('maps positions of the script back to the code as written', () => {
    const prepared = prepareCode('const a = 1\nfunction f() {}\n  throw new Error(a)')
    assert.ok(prepared.ok)
    const lines = prepared.script.split('\n')
    const third = lines[2] ?? ''
    assert.deepEqual(prepared.positions.original(3, third.indexOf('throw') + 1), {
      line: 3,
      column: 3,
    })
    const first = lines[0] ?? ''
    assert.deepEqual(prepared.positions.original(1, first.indexOf('(1)') + 2), {
      line: 1,
      column: 11,
    })
  })
})
