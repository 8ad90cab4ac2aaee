import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { describe, it } from 'node:test'
import { isRefName, parseLooseRef, parsePackedRefs } from './git-ref-format.ts'

const A = 'a'.repeat(40)
const B = 'b'.repeat(40)
const HEADER = '# pack-refs with: peeled fully-peeled sorted \n'

describe('ref names as git judges them', () => {
  const names = [
    'refs/heads/main',
    'refs/heads/feature/x',
    'refs/heads/x ',
    'refs/heads/a b',
    'refs/heads/a..b',
    'refs/heads/.hidden',
    'refs/heads/x.lock',
    'refs/heads/x.',
    'refs/heads/x/',
    'refs//heads',
    'refs/heads/a@{1}',
    'refs/heads/a~1',
    'refs/heads/a^',
    'refs/heads/a:b',
    'refs/heads/a?',
    'refs/heads/a*',
    'refs/heads/a[b',
    'refs/heads/a\\b',
    'refs/heads/a\tb',
    '@',
    'refs/heads/ünïcode',
    'refs/heads/a@b',
  ]
  for (const name of names) {
    it(JSON.stringify(name), () => {
      // git itself is the oracle.
      const git = spawnSync('git', ['check-ref-format', '--allow-onelevel', name])
      assert.equal(isRefName(name), git.status === 0)
    })
  }
})

describe('loose refs: what git writes', () => {
  const cases: [string, string, boolean][] = [
    ['an id and a newline', `${A}\n`, true],
    ['a symbolic ref', 'ref: refs/heads/main\n', true],
    ['no newline', A, false],
    ['upper-case hex', `${A.toUpperCase()}\n`, false],
    ['a 64-digit id in a SHA-1 repository', `${'a'.repeat(64)}\n`, false],
    ['garbage', 'garbage\n', false],
    ['a symbolic ref outside refs/', 'ref: HEAD\n', false],
    ['a symbolic ref to a bad name', 'ref: refs/heads/a b\n', false],
  ]
  for (const [what, content, readable] of cases) {
    it(what, () => {
      assert.equal(parseLooseRef(Buffer.from(content), 'sha1') !== undefined, readable)
    })
  }
  it('a SHA-256 repository reads 64 digits, not 40', () => {
    assert.ok(parseLooseRef(Buffer.from(`${'a'.repeat(64)}\n`), 'sha256'))
    assert.equal(parseLooseRef(Buffer.from(`${A}\n`), 'sha256'), undefined)
  })
})

describe('packed-refs: strictly as git reads it', () => {
  it('reads refs and peel lines under git’s header', () => {
    const parsed = parsePackedRefs(
      Buffer.from(`${HEADER}${A} refs/heads/main\n${B} refs/tags/v1\n^${A}\n`),
      'sha1',
    )
    assert.equal(parsed.type, 'refs')
    if (parsed.type !== 'refs') return
    assert.deepEqual(
      [...parsed.refs],
      [
        ['refs/heads/main', { id: A }],
        ['refs/tags/v1', { id: B, peeled: A }],
      ],
    )
  })

  const invalid: [string, string][] = [
    ['a trailing space after a name', `${A} refs/heads/main \n`],
    ['out of order under "sorted"', `${HEADER}${A} refs/heads/z\n${A} refs/heads/a\n`],
    ['a name twice', `${A} refs/heads/a\n${A} refs/heads/a\n`],
    ['a 64-digit id in a SHA-1 repository', `${'a'.repeat(64)} refs/heads/a\n`],
    ['no final newline', `${A} refs/heads/a`],
    ['another comment', `# hello\n${A} refs/heads/a\n`],
    ['a comment after the first line', `${HEADER}# more\n`],
    ['a peel line first', `^${A}\n`],
    ['two peel lines', `${A} refs/tags/a\n^${A}\n^${A}\n`],
    ['a tab for the space', `${A}\trefs/heads/a\n`],
    ['a name outside refs/', `${A} HEAD\n`],
  ]
  for (const [what, text] of invalid) {
    it(`refuses ${what}`, () => {
      assert.equal(parsePackedRefs(Buffer.from(text), 'sha1').type, 'invalid')
    })
  }

  it('accepts an empty file, a header alone, and any order without "sorted"', () => {
    for (const text of ['', HEADER, `${A} refs/heads/z\n${A} refs/heads/a\n`])
      assert.equal(parsePackedRefs(Buffer.from(text), 'sha1').type, 'refs')
  })
})
