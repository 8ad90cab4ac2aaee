import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { describe, it, type TestContext } from 'node:test'
import { DirectoryTree } from './directory-tree.ts'
import { IgnoredPaths } from './ignored-paths.ts'
import { MainWatcher } from './main-watcher.ts'

/** A project: sources, an ignored `node_modules` of many folders, a repository, eitri's state. */
function project(t: TestContext, files: Record<string, string> = {}): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'eitri-watcher-'))
  t.after(() => fs.rmSync(root, { recursive: true, force: true }))
  const all: Record<string, string> = {
    '.gitignore': 'node_modules/\nbuild/\n',
    'src/index.ts': 'export {}\n',
    'src/lib/util.ts': 'export {}\n',
    '.git/HEAD': 'ref: refs/heads/main\n',
    '.git/refs/heads/main': '0000\n',
    '.git/objects/ab/cdef': 'x',
    '.eitri/state.json': '{}',
    ...files,
  }
  for (let index = 0; index < 200; index++) all[`node_modules/pkg-${index}/index.js`] = '1\n'
  for (const [file, text] of Object.entries(all)) {
    fs.mkdirSync(path.dirname(path.join(root, file)), { recursive: true })
    fs.writeFileSync(path.join(root, file), text)
  }
  return root
}

function watcherOf(
  t: TestContext,
  root: string,
  tracked: ReadonlySet<string> = new Set(),
): MainWatcher {
  const watcher = new MainWatcher({
    root,
    excluded: (relative) => relative === '.eitri' || relative.startsWith('.eitri/'),
    ignored: new IgnoredPaths(new DirectoryTree(root)),
    trackedFolders: async () => tracked,
  })
  t.after(() => watcher.close())
  return watcher
}

/** What the watcher saw, once the kernel's events for a change have had time to arrive. */
async function seen(watcher: MainWatcher): Promise<string[] | undefined> {
  await new Promise((resolve) => setTimeout(resolve, 50))
  await watcher.walked()
  const paths = await watcher.take()
  return paths?.sort()
}

async function ready(watcher: MainWatcher): Promise<void> {
  await watcher.walked()
  assert.equal(await watcher.take(), undefined, 'blind until main was walked')
  assert.deepEqual(await watcher.take(), [])
}

describe('MainWatcher', () => {
  it('watches the folders git looks into, not ignored ones, and sees changes there', async (t) => {
    const root = project(t)
    const watcher = watcherOf(t, root)
    await ready(watcher)
    // '', src, src/lib, .git, .git/refs, .git/refs/heads: none of node_modules' 201 folders.
    assert.equal(watcher.watchedFolders, 6)
    fs.writeFileSync(path.join(root, 'src/lib/util.ts'), 'export const a = 1\n')
    fs.writeFileSync(path.join(root, 'node_modules/pkg-3/index.js'), '2\n')
    fs.writeFileSync(path.join(root, '.eitri/state.json'), '{"a":1}')
    fs.writeFileSync(path.join(root, '.git/objects/ab/cdef'), 'y')
    assert.deepEqual(await seen(watcher), ['src/lib/util.ts'])
  })

  it('sees the user’s repository move its references', async (t) => {
    const root = project(t)
    const watcher = watcherOf(t, root)
    await ready(watcher)
    fs.writeFileSync(path.join(root, '.git/refs/heads/main'), '1111\n')
    fs.mkdirSync(path.join(root, '.git/refs/tags'))
    assert.deepEqual(await seen(watcher), ['.git/refs/heads/main', '.git/refs/tags'])
    fs.writeFileSync(path.join(root, '.git/refs/tags/v1'), '1111\n')
    assert.deepEqual(await seen(watcher), ['.git/refs/tags/v1'])
  })

  it('follows a folder that appears, and forgets one that goes', async (t) => {
    const root = project(t)
    const watcher = watcherOf(t, root)
    await ready(watcher)
    fs.mkdirSync(path.join(root, 'src/new/deeper'), { recursive: true })
    fs.writeFileSync(path.join(root, 'src/new/deeper/a.ts'), 'a\n')
    const first = await seen(watcher)
    assert.ok(first?.includes('src/new'), `the new folder is marked changed: ${String(first)}`)
    fs.writeFileSync(path.join(root, 'src/new/deeper/b.ts'), 'b\n')
    assert.deepEqual(await seen(watcher), ['src/new/deeper/b.ts'])
    const watched = watcher.watchedFolders
    fs.rmSync(path.join(root, 'src/new'), { recursive: true })
    assert.ok((await seen(watcher))?.includes('src/new'))
    assert.equal(watcher.watchedFolders, watched - 2)
    // a folder renamed within main is watched under its new name
    fs.renameSync(path.join(root, 'src/lib'), path.join(root, 'src/library'))
    // (the moved folder's own watch also reports the move, under its old name)
    const moved = await seen(watcher)
    assert.ok(moved?.includes('src/lib') && moved.includes('src/library'), String(moved))
    fs.writeFileSync(path.join(root, 'src/library/util.ts'), 'moved\n')
    assert.deepEqual(await seen(watcher), ['src/library/util.ts'])
  })

  it('is blind while a changed .gitignore is walked again, then watches what it no longer ignores', async (t) => {
    const root = project(t, { 'build/out.js': '1\n' })
    const watcher = watcherOf(t, root)
    await ready(watcher)
    fs.writeFileSync(path.join(root, 'build/out.js'), '2\n')
    assert.deepEqual(await seen(watcher), [], 'build/ is ignored: not watched')
    fs.writeFileSync(path.join(root, '.gitignore'), 'node_modules/\n')
    assert.equal(
      await seen(watcher),
      undefined,
      'the rules changed: the next snapshot looks at all',
    )
    fs.writeFileSync(path.join(root, 'build/out.js'), '3\n')
    assert.deepEqual(await seen(watcher), ['build/out.js'])
  })

  it('watches an ignored folder the history still holds files in', async (t) => {
    const root = project(t, { 'build/kept/out.js': '1\n' })
    const watcher = watcherOf(t, root, new Set(['build', 'build/kept']))
    await ready(watcher)
    fs.writeFileSync(path.join(root, 'build/kept/out.js'), '2\n')
    assert.deepEqual(await seen(watcher), ['build/kept/out.js'])
  })

  it('control: without the ignore rules every folder would be watched', async (t) => {
    const root = project(t)
    fs.rmSync(path.join(root, '.gitignore'))
    const watcher = watcherOf(t, root)
    await ready(watcher)
    assert.ok(watcher.watchedFolders > 200, `${watcher.watchedFolders} folders watched`)
    fs.writeFileSync(path.join(root, 'node_modules/pkg-3/index.js'), '2\n')
    assert.deepEqual(await seen(watcher), ['node_modules/pkg-3/index.js'])
  })
})
