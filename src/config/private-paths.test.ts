import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { describe, it } from 'node:test'
import { privatePathsInside, realPrivatePaths } from './private-paths.ts'

async function home(t: { after: (fn: () => Promise<void>) => void }) {
  const root = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'eitri-private-')))
  t.after(() => fs.rm(root, { recursive: true, force: true }))
  const real = path.join(root, 'real-home')
  await fs.mkdir(path.join(real, '.config'), { recursive: true })
  await fs.symlink(real, path.join(root, 'home'))
  return { root, real, link: path.join(root, 'home') }
}

describe('private paths', () => {
  it('resolves a path named through a link, existing or not, to the real folder', async (t) => {
    const { real, link } = await home(t)
    const paths = realPrivatePaths([
      path.join(link, '.config', 'eitri', 'config.json'),
      path.join(link, '.local', 'state', 'eitri'),
    ])
    assert.deepEqual(privatePathsInside(real, paths), [
      '.config/eitri/config.json',
      '.local/state/eitri',
    ])
    // The positive control: compared as written, the link's paths are not inside the real root.
    assert.deepEqual(privatePathsInside(real, [path.join(link, '.local', 'state', 'eitri')]), [])
  })

  it('hides both a configuration file that is a link and the file it leads to', async (t) => {
    const { real } = await home(t)
    await fs.writeFile(path.join(real, 'elsewhere.json'), '{}')
    await fs.symlink(path.join(real, 'elsewhere.json'), path.join(real, '.config', 'config.json'))
    assert.deepEqual(
      privatePathsInside(real, realPrivatePaths([path.join(real, '.config', 'config.json')])),
      ['.config/config.json', 'elsewhere.json'],
    )
  })

  it('answers "" for a private folder that is the workspace or holds it, and nothing outside', async (t) => {
    const { root, real } = await home(t)
    assert.deepEqual(privatePathsInside(real, [real]), [''])
    assert.deepEqual(privatePathsInside(real, [root]), [''])
    assert.deepEqual(privatePathsInside(real, [path.join(root, 'state')]), [])
    assert.deepEqual(privatePathsInside(real, [path.join(real, '..foo')]), ['..foo'])
  })
})
