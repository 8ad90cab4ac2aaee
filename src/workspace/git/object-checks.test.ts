import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { after, describe, it } from 'node:test'
import { gitOk, makeHistoryRepository, packAliasing } from '../../../test/helpers/git-repository.ts'
import { missingObjects, verifyPack } from './object-checks.ts'
import { objectFormatOf } from './object-format.ts'

const fixture = makeHistoryRepository()
after(() => fs.rmSync(path.dirname(fixture.folder), { recursive: true, force: true }))
const objects = path.join(fixture.folder, '.git/objects')

describe('object checks by git, on the user’s object store read only', () => {
  it('finds which ids the store lacks (loose or packed)', async () => {
    gitOk(fixture.folder, ['gc', '-q'])
    const absent = '1'.repeat(40)
    const missing = await missingObjects(
      objects,
      [fixture.first, fixture.blob, absent, 'junk'],
      'sha1',
    )
    assert.deepEqual([...missing].sort(), [absent, 'junk'].sort())
    assert.deepEqual(
      [...(await missingObjects(undefined, [fixture.first], 'sha1'))],
      [fixture.first],
    )
  })

  it('verifies a pack git made, and refuses an index that maps a known id to other content', async () => {
    const packs = path.join(objects, 'pack')
    const name = fs.readdirSync(packs).find((file) => file.endsWith('.pack')) as string
    const pack = fs.readFileSync(path.join(packs, name))
    const index = fs.readFileSync(path.join(packs, name.replace(/\.pack$/, '.idx')))
    assert.deepEqual(await verifyPack(pack, index, 'sha1', objects), { ok: true })
    const forged = packAliasing(fixture.blob, 'forged\n')
    const check = await verifyPack(forged.pack, forged.index, 'sha1', objects)
    assert.equal(check.ok, false)
    // The control: the same pack with its honest index passes.
    const honest = packAliasing(
      gitOk(fixture.folder, ['hash-object', '--stdin'], 'forged\n'),
      'forged\n',
    )
    assert.deepEqual(await verifyPack(honest.pack, honest.index, 'sha1'), { ok: true })
  })

  it('reads the object format from the configuration as git does', async () => {
    assert.equal(await objectFormatOf(undefined), 'sha1')
    assert.equal(await objectFormatOf(Buffer.from('[core]\n\tbare = false\n')), 'sha1')
    assert.equal(
      await objectFormatOf(
        Buffer.from(
          '[core]\n\trepositoryformatversion = 1\n[extensions]\n\tobjectFormat = sha256\n',
        ),
      ),
      'sha256',
    )
    assert.equal(
      await objectFormatOf(Buffer.from('[extensions "x"]\n\tobjectformat = sha256\n')),
      'sha1',
    )
  })
})
