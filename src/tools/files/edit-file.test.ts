import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import { describe, it } from 'node:test'
import {
  createTestWorkspace,
  errorContent,
  successContent,
  type TestWorkspace,
} from './test-workspace.ts'

const edit = (workspace: TestWorkspace, input: Record<string, unknown>) =>
  workspace.run('edit_file', input)

const text = async (workspace: TestWorkspace, path: string) =>
  (await workspace.read(path)).toString('utf8')

describe('edit_file', () => {
  it('replaces a unique occurrence and reports 1', async (t) => {
    const workspace = await createTestWorkspace(t)
    await workspace.write('src/app.ts', 'const a = 1\nconst b = 2\nconst c = 3\n')
    const result = await edit(workspace, {
      path: 'src/app.ts',
      old_string: 'const b = 2',
      new_string: 'const b = 20',
    })
    assert.equal(successContent(result), 'Replaced 1 occurrence in src/app.ts')
    assert.equal(result.metadata.replacements, 1)
    assert.equal(result.metadata.path, 'src/app.ts')
    assert.equal(await text(workspace, 'src/app.ts'), 'const a = 1\nconst b = 20\nconst c = 3\n')
  })

  it('matches whitespace and indentation literally', async (t) => {
    const workspace = await createTestWorkspace(t)
    await workspace.write('a.py', 'def f():\n    return 1\n\treturn 2\n')
    successContent(
      await edit(workspace, { path: 'a.py', old_string: '\treturn', new_string: '\tyield' }),
    )
    assert.equal(await text(workspace, 'a.py'), 'def f():\n    return 1\n\tyield 2\n')
  })

  it('refuses an ambiguous edit, gives the count, mentions replace_all, and changes no byte', async (t) => {
    const workspace = await createTestWorkspace(t)
    const original = Buffer.from('x = 1\r\nx = 1\r\ny = 2\r\nx = 1\r\n\u00e9', 'utf8')
    await workspace.write('dup.txt', original)
    await fs.chmod(workspace.host('dup.txt'), 0o600)
    const inodeBefore = (await fs.stat(workspace.host('dup.txt'))).ino
    const result = await edit(workspace, {
      path: 'dup.txt',
      old_string: 'x = 1',
      new_string: 'x = 2',
    })
    const content = errorContent(result, 'ambiguous_match')
    assert.match(content, /found 3 times/)
    assert.match(content, /replace_all/)
    assert.equal(result.metadata.occurrences, 3)
    assert.deepEqual(await workspace.read('dup.txt'), original)
    const after = await fs.stat(workspace.host('dup.txt'))
    assert.equal(after.ino, inodeBefore, 'the file was not replaced')
    assert.equal(after.mode & 0o777, 0o600)
  })

  it('replaces every occurrence with replace_all and reports the count', async (t) => {
    const workspace = await createTestWorkspace(t)
    await workspace.write('dup.txt', 'foo bar foo\nfoo\nbaz\n')
    const result = await edit(workspace, {
      path: 'dup.txt',
      old_string: 'foo',
      new_string: 'qux',
      replace_all: true,
    })
    assert.equal(successContent(result), 'Replaced 3 occurrences in dup.txt')
    assert.equal(result.metadata.replacements, 3)
    assert.equal(await text(workspace, 'dup.txt'), 'qux bar qux\nqux\nbaz\n')
  })

  it('with replace_all, reports 1 for a single occurrence', async (t) => {
    const workspace = await createTestWorkspace(t)
    await workspace.write('one.txt', 'only once\n')
    const result = await edit(workspace, {
      path: 'one.txt',
      old_string: 'once',
      new_string: 'twice',
      replace_all: true,
    })
    assert.equal(successContent(result), 'Replaced 1 occurrence in one.txt')
    assert.equal(await text(workspace, 'one.txt'), 'only twice\n')
  })

  it('counts occurrences without overlap, as it replaces them', async (t) => {
    const workspace = await createTestWorkspace(t)
    await workspace.write('a.txt', 'aaaa')
    const result = await edit(workspace, {
      path: 'a.txt',
      old_string: 'aa',
      new_string: 'b',
      replace_all: true,
    })
    assert.equal(successContent(result), 'Replaced 2 occurrences in a.txt')
    assert.equal(await text(workspace, 'a.txt'), 'bb')
  })

  it('answers no_match for an absent string and leaves the file unchanged', async (t) => {
    const workspace = await createTestWorkspace(t)
    await workspace.write('a.txt', 'hello world\n')
    const result = await edit(workspace, { path: 'a.txt', old_string: 'Hello', new_string: 'Bye' })
    const content = errorContent(result, 'no_match')
    assert.match(content, /a\.txt/)
    assert.match(content, /unchanged/)
    assert.equal(await text(workspace, 'a.txt'), 'hello world\n')
  })

  for (const replaceAll of [false, true]) {
    it(`inserts $& and $1 literally (replace_all ${replaceAll})`, async (t) => {
      const workspace = await createTestWorkspace(t)
      await workspace.write('price.txt', 'price: PRICE\n')
      const result = await edit(workspace, {
        path: 'price.txt',
        old_string: 'PRICE',
        new_string: "$& $1 $$ $' $`",
        replace_all: replaceAll,
      })
      successContent(result)
      assert.equal(await text(workspace, 'price.txt'), "price: $& $1 $$ $' $`\n")
    })
  }

  it('refuses old_string equal to new_string', async (t) => {
    const workspace = await createTestWorkspace(t)
    await workspace.write('a.txt', 'same\n')
    const result = await edit(workspace, { path: 'a.txt', old_string: 'same', new_string: 'same' })
    assert.match(errorContent(result, 'invalid_input'), /identical/)
    assert.equal(await text(workspace, 'a.txt'), 'same\n')
  })

  it('refuses an empty old_string, naming the field', async (t) => {
    const workspace = await createTestWorkspace(t)
    await workspace.write('a.txt', 'text\n')
    const result = await edit(workspace, { path: 'a.txt', old_string: '', new_string: 'x' })
    assert.match(errorContent(result, 'invalid_input'), /^- old_string: /m)
    assert.equal(await text(workspace, 'a.txt'), 'text\n')
  })

  it('refuses a binary file and leaves it unchanged', async (t) => {
    const workspace = await createTestWorkspace(t)
    const original = Buffer.concat([
      Buffer.from('header'),
      Buffer.from([0, 1, 2]),
      Buffer.from('header'),
    ])
    await workspace.write('blob.bin', original)
    const result = await edit(workspace, {
      path: 'blob.bin',
      old_string: 'header',
      new_string: 'x',
    })
    errorContent(result, 'binary_file')
    assert.deepEqual(await workspace.read('blob.bin'), original)
  })

  it('keeps a byte order mark and the bytes around the edit', async (t) => {
    const workspace = await createTestWorkspace(t)
    const original = Buffer.from('\ufeffname = "old"\r\nother = 1\r\n', 'utf8')
    await workspace.write('bom.toml', original)
    successContent(
      await edit(workspace, { path: 'bom.toml', old_string: 'old', new_string: 'new' }),
    )
    assert.deepEqual(
      await workspace.read('bom.toml'),
      Buffer.from('\ufeffname = "new"\r\nother = 1\r\n', 'utf8'),
    )
  })

  it('refuses a file that is not valid UTF-8 rather than rewriting its other bytes', async (t) => {
    const workspace = await createTestWorkspace(t)
    const original = Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a, 0x6f, 0x6c, 0x64, 0x0a])
    await workspace.write('latin1.txt', original)
    const result = await edit(workspace, {
      path: 'latin1.txt',
      old_string: 'old',
      new_string: 'new',
    })
    errorContent(result, 'binary_file')
    assert.deepEqual(await workspace.read('latin1.txt'), original)
  })

  it('keeps the mode of the file it edits', async (t) => {
    const workspace = await createTestWorkspace(t)
    await workspace.write('run.sh', '#!/bin/sh\necho old\n')
    await fs.chmod(workspace.host('run.sh'), 0o755)
    successContent(await edit(workspace, { path: 'run.sh', old_string: 'old', new_string: 'new' }))
    assert.equal((await fs.stat(workspace.host('run.sh'))).mode & 0o7777, 0o755)
  })

  it('answers not_found for a missing file and creates nothing', async (t) => {
    const workspace = await createTestWorkspace(t)
    const result = await edit(workspace, { path: 'missing.txt', old_string: 'a', new_string: 'b' })
    assert.match(errorContent(result, 'not_found'), /File not found: missing\.txt/)
    assert.deepEqual(await fs.readdir(workspace.root), [])
  })

  it('refuses to edit a protected path, though it may be read', async (t) => {
    const workspace = await createTestWorkspace(t)
    await workspace.write('.git/config', '[core]\n\tbare = false\n')
    const result = await edit(workspace, {
      path: '.git/config',
      old_string: 'bare = false',
      new_string: 'hooksPath = /tmp',
    })
    errorContent(result, 'protected_path')
    assert.equal(await text(workspace, '.git/config'), '[core]\n\tbare = false\n')
  })

  it('refuses a link leading outside and leaves its target unchanged', async (t) => {
    const workspace = await createTestWorkspace(t)
    await workspace.link('out.txt', `${workspace.outside}/secret.txt`)
    const before = await fs.readFile(`${workspace.outside}/secret.txt`)
    const result = await edit(workspace, { path: 'out.txt', old_string: 'SECRET', new_string: 'x' })
    errorContent(result, 'path_outside_workspace')
    assert.deepEqual(await fs.readFile(`${workspace.outside}/secret.txt`), before)
  })

  it('edits the target of a link that stays inside, keeping the link', async (t) => {
    const workspace = await createTestWorkspace(t)
    await workspace.write('docs/real.md', 'old\n')
    await workspace.link('alias.md', 'docs/real.md')
    const result = await edit(workspace, { path: 'alias.md', old_string: 'old', new_string: 'new' })
    assert.equal(successContent(result), 'Replaced 1 occurrence in docs/real.md')
    assert.equal(await text(workspace, 'docs/real.md'), 'new\n')
    assert.equal(await fs.readlink(workspace.host('alias.md')), 'docs/real.md')
  })
})
