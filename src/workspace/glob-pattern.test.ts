import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { compileGlob, MAX_GLOB_LENGTH } from './glob-pattern.ts'

const PATHS = ['a.ts', 'src/a.ts', 'src/x/y/b.ts', 'src/.hidden.ts', '.env', 'a', 'a/b', 'a/x/b']

function matching(pattern: string, options?: { basename?: boolean }): string[] {
  const matches = compileGlob(pattern, options)
  return PATHS.filter((path) => matches(path))
}

describe('compileGlob', () => {
  it('reads the usual syntax as picomatch with dot files does', () => {
    assert.deepEqual(matching('*.ts'), ['a.ts'])
    assert.deepEqual(matching('**/*.ts'), ['a.ts', 'src/a.ts', 'src/x/y/b.ts', 'src/.hidden.ts'])
    assert.deepEqual(matching('src/**'), ['src/a.ts', 'src/x/y/b.ts', 'src/.hidden.ts'])
    assert.deepEqual(matching('a/**'), ['a', 'a/b', 'a/x/b'])
    assert.deepEqual(matching('a/**/b'), ['a/b', 'a/x/b'])
    assert.deepEqual(matching('**'), PATHS)
    assert.deepEqual(matching('{src,a}/?'), ['a/b'])
    assert.deepEqual(matching('[!s]*/{b,*/{b,c}}'), ['a/b', 'a/x/b'])
    assert.deepEqual(matching('./.e[m-o]v'), ['.env'])
    assert.deepEqual(matching('*.ts', { basename: true }), [
      'a.ts',
      'src/a.ts',
      'src/x/y/b.ts',
      'src/.hidden.ts',
    ])
  })

  it('keeps what is not glob syntax literal', () => {
    assert.equal(compileGlob('f(1).txt')('f(1).txt'), true)
    assert.equal(compileGlob('\\[x].ts')('[x].ts'), true)
    assert.equal(compileGlob('a+b.ts')('aab.ts'), false)
    assert.equal(compileGlob('{only}')('{only}'), true)
  })

  it('matches in time linear in the path, whatever the stars', () => {
    // A backtracking engine tries 200^40 ways before it says no; RE2 walks the name once.
    const matches = compileGlob(`${'*a'.repeat(40)}b`)
    assert.equal(matches('a'.repeat(200)), false)
    assert.equal(matches(`${'a'.repeat(200)}b`), true)
  })

  it('refuses a pattern longer than any path, and an unknown class', () => {
    assert.throws(() => compileGlob('*'.repeat(MAX_GLOB_LENGTH + 1)), { code: 'invalid_input' })
    assert.throws(() => compileGlob('[[:nope:]]'), { code: 'invalid_input' })
  })
})
