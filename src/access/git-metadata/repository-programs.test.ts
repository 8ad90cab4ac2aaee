import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { describe, it, type TestContext } from 'node:test'
import { nestedWorkTrees, RepositoryPrograms } from './repository-programs.ts'

/** A workspace with many folders (as a node_modules has) and a repository nested deep in it. */
function workspace(t: TestContext): string {
  const root = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'eitri-repo-programs-')))
  t.after(() => fs.rmSync(root, { recursive: true, force: true }))
  for (let index = 0; index < 200; index++)
    fs.mkdirSync(path.join(root, 'node_modules', `package-${index}`, 'lib'), { recursive: true })
  fs.mkdirSync(path.join(root, 'node_modules/package-7/vendor/.git'), { recursive: true })
  return root
}

describe('RepositoryPrograms', () => {
  it('walks for nested repositories without holding the thread', async (t) => {
    const root = workspace(t)
    let turns = 0
    let walking = true
    const turn = (): void => {
      if (!walking) return
      turns++
      setImmediate(turn)
    }
    setImmediate(turn)
    const found = await nestedWorkTrees(root)
    walking = false
    assert.deepEqual(found, [path.join(root, 'node_modules/package-7/vendor')])
    assert.ok(turns > 0, 'other work ran while the folders were read')
  })

  it('prepare walks before the first write asks, which then finds the walk done', async (t) => {
    const root = workspace(t)
    const repositories = new RepositoryPrograms({ root })
    await repositories.prepare()
    // Made after the walk, within its 30 s: the first write's answer is the prepared walk's.
    fs.mkdirSync(path.join(root, 'late/.git'), { recursive: true })
    const paths = (await repositories.programPaths([])).map((program) => program.path)
    assert.ok(paths.includes('node_modules/package-7/vendor/.git/hooks'), paths.join(', '))
    assert.ok(!paths.includes('late/.git/hooks'), paths.join(', '))
  })
})
