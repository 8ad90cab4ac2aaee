import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { describe, it, type TestContext } from 'node:test'
import { createWorkspaceView } from '../access/confined-workspace.ts'
import { DirectoryTree } from './directory-tree.ts'
import { splitGitPaths } from './git/git-path.ts'
import { runGit, type GitTarget } from './git/run-git.ts'
import { IgnoredPaths, type IgnoreSource } from './ignored-paths.ts'

/**
 * A tree exercising what git's ignore rules can say: nested files, negations that work and one
 * that cannot (its folder is ignored), anchored and folder-only patterns, `**`, escapes, case,
 * a nested file inside an ignored folder (never read) and a `.gitignore` that is a link (git
 * does not follow it).
 */
const IGNORE_FILES: Readonly<Record<string, string>> = {
  '.gitignore': [
    '# a comment',
    '*.log',
    '!important.log',
    '/build',
    'dist/',
    '**/tmp/**',
    'docs/**/*.draft',
    'cache',
    '!cache/',
    'secret*',
    '!secret.pub',
    '\\#hash',
    'vendor/',
    '!vendor/keep.js',
    'a/b/',
    '',
  ].join('\n'),
  'a/.gitignore': '!*.log\n/only-here\n',
  'a/b/.gitignore': '!*\n',
  'src/.gitignore': '*.gen.ts\n!keep.gen.ts\nsub/deeper/\n',
  'pkg/.gitignore': '!dist/\n',
  'pkg/dist/.gitignore': '*.map\r\n',
  'crlf/.gitignore': '\uFEFFnotes.txt\r\n',
}

const FILES = [
  'README.md',
  'app.log',
  'Upper.LOG',
  'important.log',
  'a/x.log',
  'a/only-here',
  'a/z/only-here',
  'a/b/c.txt',
  'a/bb/c.txt',
  'build/out.js',
  'src/build/kept.js',
  'dist/d.js',
  'src/dist/d.js',
  'pkg/dist/index.js',
  'pkg/dist/index.js.map',
  'pkg/dist/sub/x.js',
  'x/tmp/y/z.txt',
  'tmp/a.txt',
  'tmpfile',
  'docs/a/b/c.draft',
  'docs/c.draft',
  'other/c.draft',
  'cache',
  'sub/cache/f.txt',
  'secret.key',
  'secret.pub',
  '#hash',
  'vendor/keep.js',
  'vendor/lib.js',
  'src/a.gen.ts',
  'src/keep.gen.ts',
  'src/sub/deeper/f.ts',
  'src/sub/f.ts',
  'crlf/notes.txt',
  'crlf/other.txt',
  'linked/f.txt',
]

function fixture(t: TestContext): string {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), 'eitri-ignore-'))
  t.after(() => fs.rmSync(base, { recursive: true, force: true }))
  const root = path.join(base, 'work')
  for (const [file, text] of Object.entries({
    ...Object.fromEntries(FILES.map((file) => [file, `${file}\n`])),
    ...IGNORE_FILES,
  })) {
    fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true })
    fs.writeFileSync(path.join(root, file), text)
  }
  fs.writeFileSync(path.join(base, 'ignore-everything'), '*\n')
  fs.symlinkSync('../../ignore-everything', path.join(root, 'linked/.gitignore'))
  return root
}

/** git with a repository of its own beside the folder, as eitri's history runs it. */
async function gitOf(t: TestContext, root: string): Promise<GitTarget> {
  const gitDir = fs.mkdtempSync(path.join(os.tmpdir(), 'eitri-ignore-git-'))
  t.after(() => fs.rmSync(gitDir, { recursive: true, force: true }))
  await runGit({ gitDir }, ['init', '--quiet', '--bare'])
  return { gitDir, workTree: root }
}

/** Every file and folder below `root`, workspace-relative (`.git` aside). */
function everyPath(root: string, folder = ''): { path: string; directory: boolean }[] {
  const found: { path: string; directory: boolean }[] = []
  for (const entry of fs.readdirSync(path.join(root, folder), { withFileTypes: true })) {
    const relative = folder === '' ? entry.name : `${folder}/${entry.name}`
    found.push({ path: relative, directory: entry.isDirectory() })
    if (entry.isDirectory()) found.push(...everyPath(root, relative))
  }
  return found
}

async function walked(root: string): Promise<string[]> {
  const view = createWorkspaceView({ tree: new DirectoryTree(root) })
  const files: string[] = []
  for await (const entry of view.walk('', { gitignore: true }))
    if (entry.type !== 'directory') files.push(entry.path)
  return files.sort()
}

describe('ignored paths', () => {
  it('walks exactly the files git would snapshot', async (t) => {
    const root = fixture(t)
    const git = await gitOf(t, root)
    const listed = await runGit(git, ['ls-files', '-z', '--others', '--exclude-standard'])
    const expected = splitGitPaths(listed.stdout).map(String).sort()
    assert.deepEqual(await walked(root), expected)
    // Positive controls: the fixture's rules do bite, and do re-include.
    const shown = ['README.md', 'important.log', 'a/x.log', 'pkg/dist/sub/x.js', 'sub/cache/f.txt']
    for (const file of shown) assert.ok(expected.includes(file), `${file} is not ignored`)
    for (const hidden of [
      'app.log',
      'cache',
      'a/b/c.txt',
      'vendor/keep.js',
      'pkg/dist/index.js.map',
    ])
      assert.ok(!expected.includes(hidden), `${hidden} is ignored`)
  })

  it('judges every path as git check-ignore does', async (t) => {
    const root = fixture(t)
    const git = await gitOf(t, root)
    const paths = everyPath(root)
    const checked = await runGit(git, ['check-ignore', '--no-index', '-z', '--stdin'], {
      input: paths.map((entry) => `${entry.path}\0`).join(''),
      allowStatus: [0, 1],
    })
    const ignoredByGit = new Set(splitGitPaths(checked.stdout).map(String))
    assert.ok(ignoredByGit.size > 10 && ignoredByGit.size < paths.length - 10)
    const rules = new IgnoredPaths(new DirectoryTree(root))
    const differences: string[] = []
    for (const entry of paths) {
      const ours = await rules.isIgnored(entry.path, entry.directory ? 'directory' : 'file')
      if (ours !== ignoredByGit.has(entry.path))
        differences.push(`${entry.path}: git ${!ours}, eitri ${ours}`)
    }
    assert.deepEqual(differences, [])
  })

  it('reads a .gitignore again only when it changed', async (t) => {
    const root = fixture(t)
    const tree = new DirectoryTree(root)
    const reads: string[] = []
    const source: IgnoreSource = {
      stat: (file) => tree.stat(file),
      readFile: (file, bounds) => {
        reads.push(file)
        return tree.readFile(file, bounds)
      },
    }
    const rules = new IgnoredPaths(source)
    const old = new Date(Date.now() - 60_000)
    fs.utimesSync(path.join(root, 'src/.gitignore'), old, old)
    assert.equal(await rules.isIgnored('src/a.gen.ts', 'file'), true)
    assert.equal(await rules.isIgnored('src/keep.gen.ts', 'file'), false)
    assert.equal(reads.filter((file) => file === 'src/.gitignore').length, 1)
    // Same size, another time: read again, and the new patterns hold.
    fs.writeFileSync(path.join(root, 'src/.gitignore'), '*.gen.js\n!keep.gen.js\nsub/deeper/\n')
    const later = new Date(Date.now() - 30_000)
    fs.utimesSync(path.join(root, 'src/.gitignore'), later, later)
    assert.equal(await rules.isIgnored('src/a.gen.ts', 'file'), false)
    assert.equal(await rules.isIgnored('src/a.gen.js', 'file'), true)
    assert.equal(reads.filter((file) => file === 'src/.gitignore').length, 2)
    // Removed: its patterns go with it.
    fs.rmSync(path.join(root, 'src/.gitignore'))
    assert.equal(await rules.isIgnored('src/a.gen.js', 'file'), false)
  })

  it('does not trust a .gitignore written just now past one look', async (t) => {
    const root = fixture(t)
    const rules = new IgnoredPaths(new DirectoryTree(root))
    fs.writeFileSync(path.join(root, 'src/.gitignore'), 'one.ts\n')
    assert.equal(await rules.isIgnored('src/one.ts', 'file'), true)
    // Same size, same second: only a fresh read can tell.
    fs.writeFileSync(path.join(root, 'src/.gitignore'), 'two.ts\n')
    assert.equal(await rules.isIgnored('src/one.ts', 'file'), false)
    assert.equal(await rules.isIgnored('src/two.ts', 'file'), true)
  })

  it('walks a folder named as the start even when it is ignored', async (t) => {
    const root = fixture(t)
    const view = createWorkspaceView({ tree: new DirectoryTree(root) })
    const files: string[] = []
    for await (const entry of view.walk('vendor', { gitignore: true })) files.push(entry.path)
    assert.deepEqual(files.sort(), ['vendor/keep.js', 'vendor/lib.js'])
    // Patterns still apply below the start.
    const below: string[] = []
    for await (const entry of view.walk('a/b', { gitignore: true })) below.push(entry.path)
    assert.deepEqual(below.sort(), ['a/b/.gitignore', 'a/b/c.txt'])
    const dist: string[] = []
    for await (const entry of view.walk('pkg', { gitignore: true })) dist.push(entry.path)
    assert.ok(dist.includes('pkg/dist/index.js') && !dist.includes('pkg/dist/index.js.map'))
  })
})
