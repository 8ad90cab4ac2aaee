import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { describe, it } from 'node:test'
import { decodeRefs, encodeRefs, isReferenceName, UserGitRefs } from './user-git-refs.ts'

const A = 'a'.repeat(40)
const B = 'b'.repeat(40)

describe('the user’s git references', () => {
  it('reads loose and packed references as one set, loose winning, with HEAD', async (t) => {
    const root = await fs.mkdtemp(path.join(os.tmpdir(), 'eitri-refs-'))
    t.after(() => fs.rm(root, { recursive: true, force: true }))
    const git = path.join(root, '.git')
    await fs.mkdir(path.join(git, 'refs/heads/feature'), { recursive: true })
    await fs.writeFile(path.join(git, 'HEAD'), 'ref: refs/heads/main\n')
    await fs.writeFile(
      path.join(git, 'packed-refs'),
      `# pack-refs with: peeled fully-peeled sorted\n${A} refs/heads/main\n${A} refs/tags/v1\n^${B}\n`,
    )
    await fs.writeFile(path.join(git, 'refs/heads/main'), `${B}\n`)
    await fs.writeFile(path.join(git, 'refs/heads/feature/x'), `${A}\n`)
    await fs.writeFile(path.join(git, 'refs/heads/main.lock'), `${A}\n`)
    // A name git would never accept: with a newline it could pass for HEAD in the list.
    await fs.writeFile(path.join(git, 'refs/heads/evil\nHEAD'), `${A}\n`)
    const reading = new UserGitRefs(root).read()
    assert.equal(reading.type, 'recorded')
    const refs = reading.type === 'recorded' ? reading.refs : new Map()
    assert.deepEqual(Object.fromEntries(refs), {
      HEAD: 'ref: refs/heads/main',
      'refs/heads/feature/x': A,
      'refs/heads/main': B,
      'refs/tags/v1': A,
    })
    assert.deepEqual(decodeRefs(encodeRefs(refs)), refs)
  })

  it('judges names as git does', () => {
    for (const good of ['HEAD', 'refs/heads/main', 'refs/remotes/origin/feature-1'])
      assert.ok(isReferenceName(good), good)
    for (const bad of [
      'refs/heads/a\nHEAD',
      'refs/heads/a\tb',
      'refs/heads/a..b',
      'refs/heads/.hidden',
      'refs/heads/x.lock',
      'refs/heads/a b',
      'heads/main',
      'refs/heads/',
    ])
      assert.ok(!isReferenceName(bad), JSON.stringify(bad))
  })
})
