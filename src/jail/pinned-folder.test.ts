import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { describe, it } from 'node:test'
import { EitriError } from '../errors/eitri-error.ts'
import { atPinned, listPinned, removePinned, walkPinned } from './pinned-folder.ts'

/** A layer to work below, and an outside folder a planted link points to. */
function fixture(t: { after: (done: () => void) => void }) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'eitri-pinned-test-'))
  t.after(() => fs.rmSync(root, { recursive: true, force: true }))
  const layer = path.join(root, 'layer')
  const outside = path.join(root, 'outside')
  fs.mkdirSync(path.join(layer, 'real'), { recursive: true })
  fs.mkdirSync(outside)
  fs.writeFileSync(path.join(outside, 'secret'), 'secret\n')
  fs.writeFileSync(path.join(layer, 'real', 'file'), 'mine\n')
  fs.symlinkSync(outside, path.join(layer, 'link'))
  return { layer, outside }
}

describe('pinned folders', () => {
  it('reach a path through real folders (the control), never through a link on the way', (t) => {
    const { layer, outside } = fixture(t)
    assert.equal(
      atPinned(layer, 'real/file', (pinned) => fs.readFileSync(pinned, 'utf8')),
      'mine\n',
    )
    assert.throws(
      () => atPinned(layer, 'link/secret', (pinned) => fs.writeFileSync(pinned, 'planted')),
      (error) => EitriError.isInstance(error) && error.code === 'sandbox_violation',
    )
    assert.equal(fs.readFileSync(path.join(outside, 'secret'), 'utf8'), 'secret\n')
  })

  it('list a real folder, and nothing through a link', (t) => {
    const { layer } = fixture(t)
    assert.deepEqual(
      listPinned(layer, 'real').map((entry) => entry.name),
      ['file'],
    )
    assert.deepEqual(listPinned(layer, 'link'), [])
  })

  it('remove a link itself, never what it points to, and nothing below one', (t) => {
    const { layer, outside } = fixture(t)
    removePinned(layer, 'link/secret')
    assert.ok(fs.existsSync(path.join(outside, 'secret')))
    removePinned(layer, 'link')
    assert.equal(fs.existsSync(path.join(layer, 'link')), false)
    assert.ok(fs.existsSync(path.join(outside, 'secret')))
    removePinned(layer, 'real')
    assert.equal(fs.existsSync(path.join(layer, 'real')), false)
  })

  it('walk every entry once, a link as a link, without entering it', (t) => {
    const { layer } = fixture(t)
    const seen: string[] = []
    walkPinned(layer, new Set(), (entry) =>
      seen.push(`${entry.relative}${entry.stat.isSymbolicLink() ? ` -> ${entry.target}` : ''}`),
    )
    assert.deepEqual(seen.sort(), [
      `link -> ${path.join(path.dirname(layer), 'outside')}`,
      'real',
      'real/file',
    ])
  })
})
