import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { EntryStat } from '../../ports/workspace-view.ts'
import { DirectoryTree } from '../../workspace/directory-tree.ts'
import { MAX_GREP_LINE_CHARS, MAX_GREP_MATCHES } from './grep.ts'
import {
  createTestWorkspace,
  errorContent,
  OUTSIDE_SECRET,
  successContent,
  type TestWorkspace,
} from './test-workspace.ts'

const grep = (workspace: TestWorkspace, input: Record<string, unknown>) =>
  workspace.run('grep', input)

/** The result lines of a successful grep; none when it found nothing. */
async function hits(workspace: TestWorkspace, input: Record<string, unknown>): Promise<string[]> {
  const content = successContent(await grep(workspace, input))
  return content.startsWith('No matches found') ? [] : content.split('\n')
}

describe('grep', () => {
  it('answers path:line:text with 1-based lines: first, middle and a last line without newline', async (t) => {
    const workspace = await createTestWorkspace(t)
    await workspace.write('notes.txt', 'needle first\nplain\nmiddle needle\nplain\nlast needle')
    const result = await grep(workspace, { pattern: 'needle' })
    assert.equal(
      successContent(result),
      'notes.txt:1:needle first\nnotes.txt:3:middle needle\nnotes.txt:5:last needle',
    )
    assert.deepEqual(result.metadata, {
      pattern: 'needle',
      matches: 3,
      filesSearched: 1,
      truncated: false,
    })
  })

  it('names the ignored folders it did not search when nothing matches', async (t) => {
    const workspace = await createTestWorkspace(t)
    await workspace.write('.gitignore', 'node_modules\n')
    await workspace.write('src/a.ts', 'export const a = 1\n')
    await workspace.write('node_modules/pkg/index.js', 'export function chunk() {}\n')
    assert.equal(
      successContent(await grep(workspace, { pattern: 'chunk' })),
      'No matches found for chunk (not searched, as a .gitignore ignores them: node_modules; give one as path to search it)',
    )
    assert.deepEqual(await hits(workspace, { pattern: 'chunk', path: 'node_modules' }), [
      'node_modules/pkg/index.js:1:export function chunk() {}',
    ])
    assert.equal(
      successContent(await grep(workspace, { pattern: 'nothing', path: 'src' })),
      'No matches found for nothing',
    )
  })

  it('numbers lines after empty lines and a final newline correctly', async (t) => {
    const workspace = await createTestWorkspace(t)
    await workspace.write('f.txt', '\n\nhit\n\n\nhit\n')
    assert.deepEqual(await hits(workspace, { pattern: 'hit' }), ['f.txt:3:hit', 'f.txt:6:hit'])
  })

  it('reports a line once however often it matches', async (t) => {
    const workspace = await createTestWorkspace(t)
    await workspace.write('f.txt', 'a a a\nb\na\n')
    const result = await grep(workspace, { pattern: 'a' })
    assert.equal(successContent(result), 'f.txt:1:a a a\nf.txt:3:a')
    assert.equal(result.metadata.matches, 2)
  })

  it('anchors ^ and $ at line boundaries', async (t) => {
    const workspace = await createTestWorkspace(t)
    await workspace.write('f.txt', 'foo bar\nbar foo\nfoo\n')
    assert.deepEqual(await hits(workspace, { pattern: '^foo' }), ['f.txt:1:foo bar', 'f.txt:3:foo'])
    assert.deepEqual(await hits(workspace, { pattern: 'foo$' }), ['f.txt:2:bar foo', 'f.txt:3:foo'])
    assert.deepEqual(await hits(workspace, { pattern: '^bar' }), ['f.txt:2:bar foo'])
  })

  it('counts lines by characters, not bytes, after wide characters', async (t) => {
    const workspace = await createTestWorkspace(t)
    await workspace.write('u.txt', 'é😀 x\n😀😀 needle\nß needle')
    assert.deepEqual(await hits(workspace, { pattern: 'needle' }), [
      'u.txt:2:😀😀 needle',
      'u.txt:3:ß needle',
    ])
  })

  it('finds nothing in an empty file, even with a pattern matching the empty string', async (t) => {
    const workspace = await createTestWorkspace(t)
    await workspace.write('empty.txt', '')
    await workspace.write('two.txt', 'a\n\n')
    assert.deepEqual(await hits(workspace, { pattern: '^' }), ['two.txt:1:a', 'two.txt:2:'])
  })

  it("lists a folder's files by name, before those of its subfolders", async (t) => {
    const workspace = await createTestWorkspace(t)
    await workspace.write('b.txt', 'hit\n')
    await workspace.write('a/z.txt', 'hit\n')
    await workspace.write('a.txt', 'hit\n')
    assert.deepEqual(await hits(workspace, { pattern: 'hit' }), [
      'a.txt:1:hit',
      'b.txt:1:hit',
      'a/z.txt:1:hit',
    ])
  })

  it('matches case-insensitively with ignore_case', async (t) => {
    const workspace = await createTestWorkspace(t)
    await workspace.write('f.txt', 'Needle\nNEEDLE\nneedle\nhay\n')
    assert.deepEqual(await hits(workspace, { pattern: 'needle' }), ['f.txt:3:needle'])
    assert.deepEqual(await hits(workspace, { pattern: 'needle', ignore_case: true }), [
      'f.txt:1:Needle',
      'f.txt:2:NEEDLE',
      'f.txt:3:needle',
    ])
    assert.deepEqual(await hits(workspace, { pattern: 'needle', ignore_case: false }), [
      'f.txt:3:needle',
    ])
  })

  it('searches only files matching glob, *.ts at any depth', async (t) => {
    const workspace = await createTestWorkspace(t)
    await workspace.write('a.ts', 'hit\n')
    await workspace.write('src/deep/b.ts', 'hit\n')
    await workspace.write('src/c.md', 'hit\n')
    await workspace.write('d.tsx', 'hit\n')
    assert.deepEqual(await hits(workspace, { pattern: 'hit', glob: '*.ts' }), [
      'a.ts:1:hit',
      'src/deep/b.ts:1:hit',
    ])
    assert.deepEqual(await hits(workspace, { pattern: 'hit', glob: 'src/**/*.md' }), [
      'src/c.md:1:hit',
    ])
  })

  it('narrows to path, a folder or a file, keeping workspace-relative paths', async (t) => {
    const workspace = await createTestWorkspace(t)
    await workspace.write('top.txt', 'hit\n')
    await workspace.write('src/a.txt', 'hit\n')
    await workspace.write('src/b.txt', 'x\nhit\n')
    assert.deepEqual(await hits(workspace, { pattern: 'hit', path: 'src' }), [
      'src/a.txt:1:hit',
      'src/b.txt:2:hit',
    ])
    assert.deepEqual(await hits(workspace, { pattern: 'hit', path: 'src/b.txt' }), [
      'src/b.txt:2:hit',
    ])
  })

  it('skips binary files', async (t) => {
    const workspace = await createTestWorkspace(t)
    await workspace.write(
      'blob.bin',
      Buffer.concat([Buffer.from('needle\n'), Buffer.from([0, 1, 2])]),
    )
    await workspace.write('text.txt', 'needle\n')
    const result = await grep(workspace, { pattern: 'needle' })
    assert.equal(successContent(result), 'text.txt:1:needle')
    assert.equal(result.metadata.filesSearched, 1)
  })

  it('skips .git and what the root .gitignore ignores', async (t) => {
    const workspace = await createTestWorkspace(t)
    await workspace.write('.gitignore', 'node_modules/\n*.log\n')
    await workspace.write('.git/config', 'needle\n')
    await workspace.write('sub/.git/HEAD', 'needle\n')
    await workspace.write('node_modules/dep/index.js', 'needle\n')
    await workspace.write('app.log', 'needle\n')
    await workspace.write('src/main.js', 'needle\n')
    assert.deepEqual(await hits(workspace, { pattern: 'needle' }), ['src/main.js:1:needle'])
  })

  it('honours the .gitignore of every folder, and searches an ignored folder named as path', async (t) => {
    const workspace = await createTestWorkspace(t)
    await workspace.write('.gitignore', '*.log\nvendor/\n')
    await workspace.write('pkg/.gitignore', 'generated/\n!keep.log\n')
    await workspace.write('pkg/generated/out.js', 'needle\n')
    await workspace.write('pkg/keep.log', 'needle\n')
    await workspace.write('pkg/drop.log', 'needle\n')
    await workspace.write('generated/top.js', 'needle\n')
    await workspace.write('vendor/lib/index.js', 'needle\n')
    assert.deepEqual(await hits(workspace, { pattern: 'needle' }), [
      'generated/top.js:1:needle',
      'pkg/keep.log:1:needle',
    ])
    assert.deepEqual(await hits(workspace, { pattern: 'needle', path: 'vendor' }), [
      'vendor/lib/index.js:1:needle',
    ])
  })

  for (const pattern of ['(', 'a[', '(?<=a)b', '\\1']) {
    it(`answers invalid_input naming pattern for ${pattern}`, async (t) => {
      const workspace = await createTestWorkspace(t)
      await workspace.write('f.txt', 'ab\n')
      assert.match(errorContent(await grep(workspace, { pattern }), 'invalid_input'), /^pattern /)
    })
  }

  it(`caps the answer at ${MAX_GREP_MATCHES} lines and says how many matched`, async (t) => {
    const workspace = await createTestWorkspace(t)
    const total = MAX_GREP_MATCHES + 7
    const lines = Array.from({ length: total }, (_, index) => `hit ${index + 1}`)
    await workspace.write('many.txt', `${lines.join('\n')}\n`)
    const result = await grep(workspace, { pattern: 'hit' })
    const shown = successContent(result).split('\n')
    assert.equal(shown.length, MAX_GREP_MATCHES + 1)
    assert.equal(shown[0], 'many.txt:1:hit 1')
    assert.equal(
      shown[MAX_GREP_MATCHES - 1],
      `many.txt:${MAX_GREP_MATCHES}:hit ${MAX_GREP_MATCHES}`,
    )
    assert.equal(
      shown.at(-1),
      `[showing the first ${MAX_GREP_MATCHES} of ${total} matching lines; narrow the pattern, path or glob]`,
    )
    assert.equal(result.metadata.matches, total)
    assert.equal(result.metadata.truncated, true)
  })

  it(`adds no note at exactly ${MAX_GREP_MATCHES} matching lines`, async (t) => {
    const workspace = await createTestWorkspace(t)
    const lines = Array.from({ length: MAX_GREP_MATCHES }, (_, index) => `hit ${index + 1}`)
    await workspace.write('many.txt', lines.join('\n'))
    const result = await grep(workspace, { pattern: 'hit' })
    assert.equal(successContent(result).split('\n').length, MAX_GREP_MATCHES)
    assert.equal(result.metadata.truncated, false)
  })

  it('clips long lines and drops a carriage return', async (t) => {
    const workspace = await createTestWorkspace(t)
    await workspace.write('long.txt', `needle${'x'.repeat(1000)}\r\nneedle\r\n`)
    assert.deepEqual(await hits(workspace, { pattern: 'needle' }), [
      `long.txt:1:needle${'x'.repeat(MAX_GREP_LINE_CHARS - 'needle'.length)}…`,
      'long.txt:2:needle',
    ])
  })

  const runaway: readonly [string, string, string][] = [
    ['(a+)+$', `${'a'.repeat(30_000)}!\naaa\n`, 'f.txt:2:aaa'],
    ['(a|aa)*b', `${'a'.repeat(30_000)}\naab\n`, 'f.txt:2:aab'],
    ['(x+x+)+y', `${'x'.repeat(30_000)}\nxxy\n`, 'f.txt:2:xxy'],
  ]
  for (const [pattern, content, expected] of runaway) {
    it(`completes ${pattern} on a long line with the right answer`, async (t) => {
      const workspace = await createTestWorkspace(t)
      await workspace.write('f.txt', content)
      assert.deepEqual(await hits(workspace, { pattern }), [expected])
    })
  }

  it('never reads through a link leading outside', async (t) => {
    const workspace = await createTestWorkspace(t)
    await workspace.link('leak.txt', `${workspace.outside}/secret.txt`)
    await workspace.link('ext', workspace.outside)
    await workspace.write('inside.txt', 'no secret here\n')
    const secret = OUTSIDE_SECRET.trim()
    const result = await grep(workspace, { pattern: secret })
    assert.equal(successContent(result), `No matches found for ${secret}`)
    assert.equal(result.metadata.filesSearched, 1)
    const direct = errorContent(
      await grep(workspace, { pattern: secret, path: 'leak.txt' }),
      'path_outside_workspace',
    )
    assert.ok(!direct.includes(`:${secret}`), direct)
    errorContent(await grep(workspace, { pattern: secret, path: 'ext' }), 'path_outside_workspace')
  })

  it('reads a file linked from inside only once, under its real path', async (t) => {
    const workspace = await createTestWorkspace(t)
    await workspace.write('docs/real.md', 'needle\n')
    await workspace.link('alias.md', 'docs/real.md')
    await workspace.link('docs-alias', 'docs')
    assert.deepEqual(await hits(workspace, { pattern: 'needle' }), ['docs/real.md:1:needle'])
  })

  it('looks a file up once to read it: no stat of its own before the read', async (t) => {
    let stats = 0
    class CountingTree extends DirectoryTree {
      override stat(relativePath: string): Promise<EntryStat | undefined> {
        stats++
        return super.stat(relativePath)
      }
    }
    const workspace = await createTestWorkspace(t, { tree: (root) => new CountingTree(root) })
    for (let index = 0; index < 20; index++)
      await workspace.write(`src/f${index}.txt`, index === 7 ? 'needle\n' : 'hay\n')
    assert.deepEqual(await hits(workspace, { pattern: 'needle' }), ['src/f7.txt:1:needle'])
    // One per file (the read's own check that it is a file), one for the walk's start: each
    // more look goes through the path policy again, a third of a grep's time over many files.
    assert.equal(stats, 21)
  })
})
