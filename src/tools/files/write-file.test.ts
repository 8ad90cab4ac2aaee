import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import { describe, it } from 'node:test'
import {
  createTestWorkspace,
  errorContent,
  OUTSIDE_SECRET,
  successContent,
  type TestWorkspace,
} from './test-workspace.ts'

const write = (workspace: TestWorkspace, path: string, content: string) =>
  workspace.run('write_file', { path, content })

/** Every entry under a host folder, with the content of each file, for before/after checks. */
async function snapshot(folder: string): Promise<Record<string, string>> {
  const entries = await fs.readdir(folder, { recursive: true, withFileTypes: true })
  const shot: Record<string, string> = {}
  for (const entry of entries) {
    const full = `${entry.parentPath}/${entry.name}`
    const key = full.slice(folder.length + 1)
    if (entry.isSymbolicLink()) shot[key] = `-> ${await fs.readlink(full)}`
    else if (entry.isDirectory()) shot[key] = '(folder)'
    else shot[key] = await fs.readFile(full, 'utf8')
  }
  return shot
}

describe('write_file', () => {
  it('creates a file in new nested folders and says so', async (t) => {
    const workspace = await createTestWorkspace(t)
    const result = await write(workspace, 'a/b/c/new.txt', 'hello\n')
    assert.equal(successContent(result), 'Wrote 6 bytes to a/b/c/new.txt (new file)')
    assert.deepEqual(result.metadata, { path: 'a/b/c/new.txt', bytes: 6, created: true })
    assert.equal((await workspace.read('a/b/c/new.txt')).toString('utf8'), 'hello\n')
  })

  it('counts bytes, not characters', async (t) => {
    const workspace = await createTestWorkspace(t)
    const result = await write(workspace, 'u.txt', 'é😀')
    assert.equal(successContent(result), 'Wrote 6 bytes to u.txt (new file)')
    assert.equal(result.metadata.bytes, 6)
    assert.deepEqual([...(await workspace.read('u.txt'))], [0xc3, 0xa9, 0xf0, 0x9f, 0x98, 0x80])
  })

  it('overwrites an existing file, keeping its mode, and reports it as not new', async (t) => {
    const workspace = await createTestWorkspace(t)
    await workspace.write('run.sh', '#!/bin/sh\necho old, and longer than the new content\n')
    await fs.chmod(workspace.host('run.sh'), 0o755)
    const result = await write(workspace, 'run.sh', '#!/bin/sh\necho new\n')
    assert.equal(successContent(result), 'Wrote 19 bytes to run.sh')
    assert.deepEqual(result.metadata, { path: 'run.sh', bytes: 19, created: false })
    assert.equal((await workspace.read('run.sh')).toString('utf8'), '#!/bin/sh\necho new\n')
    assert.equal((await fs.stat(workspace.host('run.sh'))).mode & 0o7777, 0o755)
  })

  it('writes an empty file', async (t) => {
    const workspace = await createTestWorkspace(t)
    assert.equal(
      successContent(await write(workspace, 'empty', '')),
      'Wrote 0 bytes to empty (new file)',
    )
    assert.equal((await workspace.read('empty')).byteLength, 0)
  })

  it('writes through a link that stays inside, to its target, and names the target', async (t) => {
    const workspace = await createTestWorkspace(t)
    await workspace.write('docs/real.md', 'old\n')
    await workspace.link('alias.md', 'docs/real.md')
    const result = await write(workspace, 'alias.md', 'new\n')
    assert.equal(successContent(result), 'Wrote 4 bytes to docs/real.md')
    assert.equal((await workspace.read('docs/real.md')).toString('utf8'), 'new\n')
    assert.equal(await fs.readlink(workspace.host('alias.md')), 'docs/real.md')
  })

  it('names the canonical path it wrote', async (t) => {
    const workspace = await createTestWorkspace(t)
    const result = await write(workspace, `./x/../${'y'}/./z.txt`, 'z')
    assert.equal(successContent(result), 'Wrote 1 bytes to y/z.txt (new file)')
    assert.equal(result.metadata.path, 'y/z.txt')
  })

  const refusals: readonly {
    name: string
    path: (workspace: TestWorkspace) => string
    code: 'path_outside_workspace' | 'protected_path' | 'is_directory' | 'not_directory'
  }[] = [
    {
      name: '.. out of the workspace',
      path: () => '../outside/secret.txt',
      code: 'path_outside_workspace',
    },
    {
      name: 'a new file beside the workspace',
      path: () => '../planted.txt',
      code: 'path_outside_workspace',
    },
    {
      name: 'an absolute path outside',
      path: (w) => `${w.outside}/secret.txt`,
      code: 'path_outside_workspace',
    },
    {
      name: 'a final link to an outside file',
      path: () => 'out.txt',
      code: 'path_outside_workspace',
    },
    {
      name: 'a file below a link to an outside folder',
      path: () => 'out-dir/planted.txt',
      code: 'path_outside_workspace',
    },
    {
      name: 'an outside link reached after ..',
      path: () => 'missing/../out-dir/planted.txt',
      code: 'path_outside_workspace',
    },
    { name: 'a git hook', path: () => '.git/hooks/pre-commit', code: 'protected_path' },
    { name: 'the git config', path: () => '.git/config', code: 'protected_path' },
    { name: 'a git hook through a link', path: () => 'hooks/pre-commit', code: 'protected_path' },
    { name: 'an editor setting', path: () => '.vscode/settings.json', code: 'protected_path' },
    { name: 'an agent client configuration', path: () => '.mcp.json', code: 'protected_path' },
    { name: 'a configured protected path', path: () => 'secrets/token', code: 'protected_path' },
    { name: 'a folder', path: () => 'src', code: 'is_directory' },
    { name: 'a file used as a folder', path: () => 'src/main.ts/inner.ts', code: 'not_directory' },
  ]
  for (const refusal of refusals) {
    it(`refuses ${refusal.name} and changes nothing on disk`, async (t) => {
      const workspace = await createTestWorkspace(t, { protectedPaths: ['secrets/**'] })
      await workspace.write('src/main.ts', 'main\n')
      await workspace.write('.git/config', '[core]\n')
      await workspace.write('.git/hooks/.keep', '')
      await workspace.write('secrets/token', 'token\n')
      await workspace.link('out.txt', `${workspace.outside}/secret.txt`)
      await workspace.link('out-dir', workspace.outside)
      await workspace.link('hooks', '.git/hooks')
      const before = {
        inside: await snapshot(workspace.root),
        outside: await snapshot(workspace.outside),
      }
      const result = await write(workspace, refusal.path(workspace), 'PWNED\n')
      const content = errorContent(result, refusal.code)
      assert.ok(!content.includes(workspace.root), content)
      const after = {
        inside: await snapshot(workspace.root),
        outside: await snapshot(workspace.outside),
      }
      assert.deepEqual(after, before)
      assert.equal(after.outside['secret.txt'], OUTSIDE_SECRET)
    })
  }

  it('says why a protected path is refused and what to do', async (t) => {
    const workspace = await createTestWorkspace(t)
    const content = errorContent(await write(workspace, '.envrc', 'x'), 'protected_path')
    assert.match(content, /\.envrc is protected/)
    assert.match(content, /Ask the user/)
  })

  it('answers invalid_input for content of the wrong type and writes nothing', async (t) => {
    const workspace = await createTestWorkspace(t)
    const result = await workspace.run('write_file', { path: 'a.txt', content: 7 })
    assert.match(errorContent(result, 'invalid_input'), /^- content: /m)
    assert.deepEqual(await fs.readdir(workspace.root), [])
  })
})
