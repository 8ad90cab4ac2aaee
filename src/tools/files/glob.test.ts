import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { MAX_GLOB_RESULTS } from './glob.ts'
import {
  createTestWorkspace,
  errorContent,
  OUTSIDE_SECRET,
  successContent,
  type TestWorkspace,
} from './test-workspace.ts'

const glob = (workspace: TestWorkspace, input: Record<string, unknown>) =>
  workspace.run('glob', input)

/** The listed paths of a successful glob. */
async function listed(workspace: TestWorkspace, input: Record<string, unknown>): Promise<string[]> {
  const content = successContent(await glob(workspace, input))
  return content.startsWith('No files match') ? [] : content.split('\n')
}

async function writeAll(workspace: TestWorkspace, paths: readonly string[]): Promise<void> {
  for (const path of paths) await workspace.write(path, `${path}\n`)
}

describe('glob', () => {
  it('lists matching files, workspace-relative and sorted', async (t) => {
    const workspace = await createTestWorkspace(t)
    await writeAll(workspace, ['b.ts', 'a.ts', 'src/z.ts', 'src/a/b.ts', 'README.md', 'src/B.ts'])
    const result = await glob(workspace, { pattern: '**/*.ts' })
    assert.equal(successContent(result), 'a.ts\nb.ts\nsrc/B.ts\nsrc/a/b.ts\nsrc/z.ts')
    assert.deepEqual(result.metadata, { pattern: '**/*.ts', count: 5, truncated: false })
  })

  it('matches * within one folder only', async (t) => {
    const workspace = await createTestWorkspace(t)
    await writeAll(workspace, ['top.json', 'src/inner.json'])
    assert.deepEqual(await listed(workspace, { pattern: '*.json' }), ['top.json'])
    assert.deepEqual(await listed(workspace, { pattern: 'src/*.json' }), ['src/inner.json'])
  })

  it('lists dot files but never folders', async (t) => {
    const workspace = await createTestWorkspace(t)
    await writeAll(workspace, ['.env', 'dir/.hidden', 'dir/sub/file'])
    assert.deepEqual(await listed(workspace, { pattern: '**' }), [
      '.env',
      'dir/.hidden',
      'dir/sub/file',
    ])
  })

  it('skips the contents of .git folders, at any depth', async (t) => {
    const workspace = await createTestWorkspace(t)
    await writeAll(workspace, [
      '.git/config',
      '.git/hooks/pre-commit.sample',
      'vendor/lib/.git/HEAD',
      'vendor/lib/index.js',
      'main.js',
    ])
    assert.deepEqual(await listed(workspace, { pattern: '**' }), ['main.js', 'vendor/lib/index.js'])
    assert.deepEqual(await listed(workspace, { pattern: '**/HEAD' }), [])
  })

  it('skips what the root .gitignore ignores', async (t) => {
    const workspace = await createTestWorkspace(t)
    await workspace.write('.gitignore', 'node_modules/\n*.log\n/build\n')
    await writeAll(workspace, [
      'node_modules/left-pad/index.js',
      'packages/app/node_modules/dep/index.js',
      'debug.log',
      'logs/today.log',
      'build/out.js',
      'src/build/kept.js',
      'src/main.js',
    ])
    assert.deepEqual(await listed(workspace, { pattern: '**/*' }), [
      '.gitignore',
      'src/build/kept.js',
      'src/main.js',
    ])
    assert.deepEqual(await listed(workspace, { pattern: '**/*.js' }), [
      'src/build/kept.js',
      'src/main.js',
    ])
  })

  it('honours the .gitignore of every folder, deeper files overriding', async (t) => {
    const workspace = await createTestWorkspace(t)
    await workspace.write('.gitignore', '*.log\nnode_modules/\n')
    await workspace.write('app/.gitignore', '!*.log\n/out\n')
    await workspace.write('app/lib/.gitignore', 'secret.txt\n')
    await writeAll(workspace, [
      'top.log',
      'app/kept.log',
      'app/out/bundle.js',
      'app/lib/out/kept.js',
      'app/lib/secret.txt',
      'app/lib/open.txt',
      'other/secret.txt',
    ])
    assert.deepEqual(await listed(workspace, { pattern: '**/*.{log,js,txt}' }), [
      'app/kept.log',
      'app/lib/open.txt',
      'app/lib/out/kept.js',
      'other/secret.txt',
    ])
  })

  it('keeps the rules on the way to a pattern’s folders, but searches an ignored path', async (t) => {
    const workspace = await createTestWorkspace(t)
    await workspace.write('.gitignore', 'node_modules/\n')
    await writeAll(workspace, ['node_modules/dep/index.js'])
    assert.deepEqual(await listed(workspace, { pattern: 'node_modules/**/*.js' }), [])
    assert.deepEqual(await listed(workspace, { pattern: '**/*.js', path: 'node_modules' }), [
      'node_modules/dep/index.js',
    ])
    assert.deepEqual(await listed(workspace, { pattern: 'dep/*.js', path: 'node_modules' }), [
      'node_modules/dep/index.js',
    ])
  })

  it('lists node_modules when no .gitignore ignores it', async (t) => {
    const workspace = await createTestWorkspace(t)
    await writeAll(workspace, ['node_modules/left-pad/index.js'])
    assert.deepEqual(await listed(workspace, { pattern: '**/*.js' }), [
      'node_modules/left-pad/index.js',
    ])
  })

  it('narrows to path, keeping results workspace-relative', async (t) => {
    const workspace = await createTestWorkspace(t)
    await writeAll(workspace, [
      'main.ts',
      'src/main.ts',
      'src/deep/x.ts',
      'src/lib/y.ts',
      'test/t.ts',
    ])
    assert.deepEqual(await listed(workspace, { pattern: '*.ts', path: 'src' }), ['src/main.ts'])
    assert.deepEqual(await listed(workspace, { pattern: '**/*.ts', path: 'src' }), [
      'src/deep/x.ts',
      'src/lib/y.ts',
      'src/main.ts',
    ])
    assert.deepEqual(await listed(workspace, { pattern: 'lib/*.ts', path: './src/' }), [
      'src/lib/y.ts',
    ])
    assert.deepEqual(await listed(workspace, { pattern: '*.ts', path: '/workspace/src/deep' }), [
      'src/deep/x.ts',
    ])
  })

  it('narrows through a folder link that stays inside, naming the real paths', async (t) => {
    const workspace = await createTestWorkspace(t)
    await writeAll(workspace, ['src/main.ts'])
    await workspace.link('alias', 'src')
    assert.deepEqual(await listed(workspace, { pattern: '*.ts', path: 'alias' }), ['src/main.ts'])
    assert.deepEqual(await listed(workspace, { pattern: '**/*.ts' }), ['src/main.ts'])
  })

  it(`caps the list at ${MAX_GLOB_RESULTS} and says how many matched`, async (t) => {
    const workspace = await createTestWorkspace(t)
    const total = MAX_GLOB_RESULTS + 5
    const names = Array.from(
      { length: total },
      (_, index) => `many/f${String(index).padStart(4, '0')}.txt`,
    )
    await writeAll(workspace, names)
    const result = await glob(workspace, { pattern: 'many/*.txt' })
    const lines = successContent(result).split('\n')
    assert.equal(lines.length, MAX_GLOB_RESULTS + 1)
    assert.deepEqual(lines.slice(0, -1), names.slice(0, MAX_GLOB_RESULTS))
    assert.equal(
      lines.at(-1),
      `[showing the first ${MAX_GLOB_RESULTS} of ${total} matches; narrow the pattern or path]`,
    )
    assert.deepEqual(result.metadata, { pattern: 'many/*.txt', count: total, truncated: true })
  })

  it(`adds no note at exactly ${MAX_GLOB_RESULTS} matches`, async (t) => {
    const workspace = await createTestWorkspace(t)
    const names = Array.from(
      { length: MAX_GLOB_RESULTS },
      (_, index) => `many/f${String(index).padStart(4, '0')}.txt`,
    )
    await writeAll(workspace, names)
    const result = await glob(workspace, { pattern: '**/*.txt' })
    assert.deepEqual(successContent(result).split('\n'), names)
    assert.equal(result.metadata.truncated, false)
  })

  for (const pattern of ['../*', '../outside/*', 'src/../../*', '/etc/*', '/**']) {
    it(`refuses the pattern ${pattern}`, async (t) => {
      const workspace = await createTestWorkspace(t)
      const content = errorContent(await glob(workspace, { pattern }), 'invalid_input')
      assert.match(content, /pattern must stay inside the folder searched/)
      assert.ok(!content.includes(OUTSIDE_SECRET.trim()))
    })
  }

  it('never follows a folder link leading outside', async (t) => {
    const workspace = await createTestWorkspace(t)
    await workspace.write('inside.txt', 'inside\n')
    await workspace.link('ext', workspace.outside)
    await workspace.link('nested/etc', '/etc')
    const everything = await listed(workspace, { pattern: '**' })
    assert.deepEqual(
      everything.filter((path) => path.startsWith('ext/') || path.startsWith('nested/etc/')),
      [],
    )
    assert.deepEqual(await listed(workspace, { pattern: '**/secret.txt' }), [])
    assert.deepEqual(await listed(workspace, { pattern: '**/passwd' }), [])
    errorContent(await glob(workspace, { pattern: '*', path: 'ext' }), 'path_outside_workspace')
    errorContent(await glob(workspace, { pattern: 'ext/*.txt' }), 'path_outside_workspace')
  })

  it('says when no file matches', async (t) => {
    const workspace = await createTestWorkspace(t)
    await writeAll(workspace, ['a.ts'])
    const result = await glob(workspace, { pattern: '**/*.rs' })
    assert.equal(successContent(result), 'No files match **/*.rs')
    assert.deepEqual(result.metadata, { pattern: '**/*.rs', count: 0, truncated: false })
    assert.equal(
      successContent(await glob(workspace, { pattern: 'missing/**' })),
      'No files match missing/**',
    )
  })

  it('names the ignored folders it did not search when nothing matches', async (t) => {
    const workspace = await createTestWorkspace(t)
    await writeAll(workspace, [
      '.gitignore',
      'src/a.ts',
      'node_modules/pkg/lexer.wasm',
      'dist/x.js',
    ])
    await workspace.write('.gitignore', 'node_modules\ndist\n')
    assert.equal(
      successContent(await glob(workspace, { pattern: '**/*.wasm' })),
      'No files match **/*.wasm (not searched, as a .gitignore ignores them: dist, node_modules; give one as path to search it)',
    )
    assert.deepEqual(await listed(workspace, { pattern: '**/*.wasm', path: 'node_modules' }), [
      'node_modules/pkg/lexer.wasm',
    ])
  })

  it('answers not_found for a missing folder and invalid_input for a bad pattern type', async (t) => {
    const workspace = await createTestWorkspace(t)
    errorContent(await glob(workspace, { pattern: '*', path: 'missing' }), 'not_found')
    assert.match(
      errorContent(await glob(workspace, { pattern: 3 }), 'invalid_input'),
      /^- pattern: /m,
    )
  })
})
