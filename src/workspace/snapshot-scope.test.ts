import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { describe, it, type TestContext } from 'node:test'
import { gitPathOf } from './git/git-path.ts'
import { LeftOutPaths } from './left-out-paths.ts'
import { snapshotScope } from './snapshot-scope.ts'

async function folder(t: TestContext, entries: readonly string[]): Promise<string> {
  const root = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'eitri-scope-')))
  t.after(() => fs.rm(root, { recursive: true, force: true }))
  for (const entry of entries) {
    const target = path.join(root, entry)
    if (entry.endsWith('/')) await fs.mkdir(target, { recursive: true })
    else {
      await fs.mkdir(path.dirname(target), { recursive: true })
      await fs.writeFile(target, 'x\n')
    }
  }
  return root
}

describe('the scope of a snapshot', () => {
  it('looks at the nearest folder of each change, none inside another, and never inside .git', async (t) => {
    const root = await folder(t, ['src/a/b.ts', 'src/c.ts', 'docs/x.md', '.git/refs/heads/'])
    const leftOut = new LeftOutPaths(root, 100)
    assert.deepEqual(
      snapshotScope(root, ['src/a/b.ts', 'src/c.ts', 'docs/x.md', '.git/refs/heads/main'], leftOut),
      { folders: ['docs', 'src'], files: ['src/a/b.ts', 'src/c.ts', 'docs/x.md'] },
    )
    // a path gone since: its nearest folder that still exists
    assert.deepEqual(snapshotScope(root, ['src/gone/deep/f.ts'], leftOut).folders, ['src'])
    // the user's .git alone: nothing to look at
    assert.deepEqual(snapshotScope(root, ['.git/index', '.git'], leftOut), {
      folders: [],
      files: [],
    })
    assert.deepEqual(snapshotScope(root, ['top.txt', 'src/c.ts'], leftOut), { folders: ['.'] })
  })

  it('never names a path through a link', async (t) => {
    const root = await folder(t, ['real/b/c.txt', 'src/x.ts'])
    await fs.symlink('real', path.join(root, 'link'))
    await fs.symlink('../real', path.join(root, 'src/inner'))
    const leftOut = new LeftOutPaths(root, 100)
    assert.deepEqual(snapshotScope(root, ['link/b/c.txt'], leftOut).folders, ['.'])
    assert.deepEqual(snapshotScope(root, ['src/inner/b/c.txt'], leftOut).folders, ['src'])
  })

  it('leaves a repository left out alone while it holds a .git; judges its folder again when that changes', async (t) => {
    const root = await folder(t, ['vendor/lib/.git/HEAD', 'vendor/lib/src/a.c', 'tools/x/a.c'])
    const leftOut = new LeftOutPaths(root, 100)
    leftOut.add(gitPathOf('vendor/lib'), 'repository')
    assert.deepEqual(
      snapshotScope(
        root,
        ['vendor/lib/src/a.c', 'vendor/lib/.git/index', 'vendor/lib/.git'],
        leftOut,
      ),
      { folders: [], files: [] },
    )
    // a .git appears in a folder eitri did not know as a repository: git judges that folder
    await fs.mkdir(path.join(root, 'tools/x/.git'))
    assert.deepEqual(snapshotScope(root, ['tools/x/.git/HEAD', 'tools/x/a.c'], leftOut), {
      folders: ['tools/x'],
    })
    // the repository's .git goes: its files are main's again
    await fs.rm(path.join(root, 'vendor/lib/.git'), { recursive: true })
    assert.deepEqual(snapshotScope(root, ['vendor/lib/.git/HEAD'], leftOut), {
      folders: ['vendor/lib'],
    })
    assert.equal(leftOut.repositoryOf(gitPathOf('vendor/lib/src/a.c')), undefined)
  })
})
