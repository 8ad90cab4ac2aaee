import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { DEFAULT_READ_LINES } from './read-file.ts'
import {
  createTestWorkspace,
  errorContent,
  OUTSIDE_SECRET,
  successContent,
  type TestWorkspace,
} from './test-workspace.ts'

/** `count` numbered lines, each ending in a newline. */
function numberedLines(count: number, from = 1): string {
  return Array.from({ length: count }, (_, index) => `line ${from + index}\n`).join('')
}

const read = (workspace: TestWorkspace, input: unknown) => workspace.run('read_file', input)

describe('read_file', () => {
  const texts: readonly [string, string][] = [
    ['lines ending in a newline', 'first\nsecond\n'],
    ['no newline at the end', 'first\nsecond'],
    ['CRLF line ends', 'first\r\nsecond\r\n'],
    ['unicode and tabs', '\tcafé 😀 ß\n  indented  \n'],
    ['only newlines', '\n\n\n'],
    ['a single line', 'one'],
    ['a byte order mark', '\ufeffkey = 1\n'],
  ]
  for (const [name, text] of texts) {
    it(`returns exactly what write_file wrote: ${name}`, async (t) => {
      const workspace = await createTestWorkspace(t)
      successContent(await workspace.run('write_file', { path: 'notes/file.txt', content: text }))
      const result = await read(workspace, { path: 'notes/file.txt' })
      assert.equal(successContent(result), text)
      assert.equal(result.metadata.complete, true)
      assert.equal(result.metadata.path, 'notes/file.txt')
      assert.equal(result.metadata.size, Buffer.byteLength(text))
    })
  }

  it('returns exactly the lines from offset, limit of them, and tells the next offset', async (t) => {
    const workspace = await createTestWorkspace(t)
    await workspace.write('ten.txt', numberedLines(10))
    const result = await read(workspace, { path: 'ten.txt', offset: 3, limit: 2 })
    assert.equal(
      successContent(result),
      'line 3\nline 4\n\n\n[showing lines 3-4 of 10; call read_file with offset 5 to read more]',
    )
    assert.deepEqual(result.metadata, {
      path: 'ten.txt',
      size: numberedLines(10).length,
      totalLines: 10,
      fromLine: 3,
      toLine: 4,
      complete: false,
    })
  })

  it('adds no note when the range reaches the last line', async (t) => {
    const workspace = await createTestWorkspace(t)
    await workspace.write('ten.txt', numberedLines(10))
    const result = await read(workspace, { path: 'ten.txt', offset: 9, limit: 5 })
    assert.equal(successContent(result), 'line 9\nline 10\n')
    assert.equal(result.metadata.toLine, 10)
    assert.equal(result.metadata.complete, false)
  })

  it('reads from offset to the end of a file without a final newline', async (t) => {
    const workspace = await createTestWorkspace(t)
    await workspace.write('f.txt', 'a\nb\nc')
    assert.equal(successContent(await read(workspace, { path: 'f.txt', offset: 2 })), 'b\nc')
    assert.equal(successContent(await read(workspace, { path: 'f.txt', offset: 3 })), 'c')
  })

  it('reads the first lines with limit alone', async (t) => {
    const workspace = await createTestWorkspace(t)
    await workspace.write('ten.txt', numberedLines(10))
    assert.equal(
      successContent(await read(workspace, { path: 'ten.txt', limit: 1 })),
      'line 1\n\n\n[showing lines 1-1 of 10; call read_file with offset 2 to read more]',
    )
  })

  it(`stops at ${DEFAULT_READ_LINES} lines by default, and following the notes reads it all`, async (t) => {
    const workspace = await createTestWorkspace(t)
    const total = DEFAULT_READ_LINES * 2 + 5
    await workspace.write('long.txt', numberedLines(total))
    const first = successContent(await read(workspace, { path: 'long.txt' }))
    assert.ok(first.startsWith(numberedLines(DEFAULT_READ_LINES)))
    assert.match(first, new RegExp(`call read_file with offset ${DEFAULT_READ_LINES + 1} `))
    let collected = ''
    let offset: number | undefined = 1
    let calls = 0
    while (offset !== undefined) {
      const content = successContent(await read(workspace, { path: 'long.txt', offset }))
      const note =
        /\n\n\[showing lines \d+-\d+ of \d+; call read_file with offset (\d+) to read more\]$/.exec(
          content,
        )
      collected += note === null ? content : content.slice(0, note.index)
      offset = note === null ? undefined : Number(note[1])
      calls++
    }
    assert.equal(calls, 3)
    assert.equal(collected, numberedLines(total))
  })

  it('answers is_directory for a folder and points to glob', async (t) => {
    const workspace = await createTestWorkspace(t)
    await workspace.write('src/a.ts', 'a\n')
    for (const path of ['src', '.']) {
      const content = errorContent(await read(workspace, { path }), 'is_directory')
      assert.match(content, /glob/)
    }
  })

  it('answers not_found for a missing file', async (t) => {
    const workspace = await createTestWorkspace(t)
    const content = errorContent(await read(workspace, { path: 'missing/file.txt' }), 'not_found')
    assert.match(content, /File not found: missing\/file\.txt/)
  })

  it('refuses a binary file', async (t) => {
    const workspace = await createTestWorkspace(t)
    await workspace.write('image.png', Uint8Array.from([0x89, 0x50, 0x4e, 0x47, 0, 0, 0, 13]))
    const content = errorContent(await read(workspace, { path: 'image.png' }), 'binary_file')
    assert.match(content, /image\.png/)
  })

  it('refuses an offset past the end, naming the line count', async (t) => {
    const workspace = await createTestWorkspace(t)
    await workspace.write('three.txt', 'a\nb\nc\n')
    const content = errorContent(
      await read(workspace, { path: 'three.txt', offset: 4 }),
      'invalid_input',
    )
    assert.match(content, /offset 4/)
    assert.match(content, /3 lines/)
    assert.equal(successContent(await read(workspace, { path: 'three.txt', offset: 3 })), 'c\n')
  })

  it('reads an empty file as empty text', async (t) => {
    const workspace = await createTestWorkspace(t)
    await workspace.write('empty.txt', '')
    const result = await read(workspace, { path: 'empty.txt' })
    assert.equal(successContent(result), '')
    assert.equal(result.metadata.totalLines, 0)
    assert.equal(result.metadata.size, 0)
  })

  const badInputs: readonly [string, unknown, string][] = [
    ['path of the wrong type', { path: 42 }, 'path'],
    ['no path', {}, 'path'],
    ['an empty path', { path: '' }, 'path'],
    ['offset 0', { path: 'f.txt', offset: 0 }, 'offset'],
    ['a fractional offset', { path: 'f.txt', offset: 1.5 }, 'offset'],
    ['limit 0', { path: 'f.txt', limit: 0 }, 'limit'],
  ]
  for (const [name, input, field] of badInputs) {
    it(`answers invalid_input naming ${field} for ${name}`, async (t) => {
      const workspace = await createTestWorkspace(t)
      await workspace.write('f.txt', 'text\n')
      const result = await read(workspace, input)
      const content = errorContent(result, 'invalid_input')
      assert.match(content, new RegExp(`^- ${field}: `, 'm'))
    })
  }

  it('follows a link that stays inside and names the file it read', async (t) => {
    const workspace = await createTestWorkspace(t)
    await workspace.write('docs/real.md', '# Real\n')
    await workspace.link('alias.md', 'docs/real.md')
    const result = await read(workspace, { path: 'alias.md' })
    assert.equal(successContent(result), '# Real\n')
    assert.equal(result.metadata.path, 'docs/real.md')
  })

  it('reads protected paths, which are refused only for writing', async (t) => {
    const workspace = await createTestWorkspace(t)
    await workspace.write('.git/config', '[core]\n')
    assert.equal(successContent(await read(workspace, { path: '.git/config' })), '[core]\n')
  })

  it('refuses paths and links leading outside, without reading them', async (t) => {
    const workspace = await createTestWorkspace(t)
    await workspace.link('out.txt', `${workspace.outside}/secret.txt`)
    await workspace.link('out-dir', workspace.outside)
    for (const path of [
      '../outside/secret.txt',
      `${workspace.outside}/secret.txt`,
      'out.txt',
      'out-dir/secret.txt',
      'missing/../out-dir/secret.txt',
    ]) {
      const content = errorContent(await read(workspace, { path }), 'path_outside_workspace')
      assert.ok(!content.includes(OUTSIDE_SECRET.trim()), content)
    }
  })

  it('never shows the host path of the workspace, on success or error', async (t) => {
    const workspace = await createTestWorkspace(t)
    await workspace.write('a.txt', 'alpha\n')
    await workspace.write('dir/b.txt', 'beta\n')
    const calls: unknown[] = [
      { path: `${workspace.root}/a.txt` },
      { path: `${workspace.root}/dir/../a.txt`, offset: 1, limit: 1 },
      { path: `${workspace.root}/missing.txt` },
      { path: `${workspace.root}/dir` },
      { path: `${workspace.root}/../outside/secret.txt` },
      { path: `${workspace.root}/a.txt`, offset: 9 },
      { path: workspace.root },
    ]
    const results = []
    for (const input of calls) results.push(await read(workspace, input))
    assert.deepEqual(
      results.map((result) => result.type),
      ['success', 'success', 'error', 'error', 'error', 'error', 'error'],
    )
    for (const result of results) {
      const shown = `${result.content} ${JSON.stringify(result.metadata)}`
      assert.ok(!shown.includes(workspace.base), shown)
    }
  })
})
