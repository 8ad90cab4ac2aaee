import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { describe, it, type TestContext } from 'node:test'
import { removeLayer, removeMountPoint } from './layer-folders.ts'

function scratch(t: TestContext): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'eitri-layer-folders-'))
  t.after(() => fs.rmSync(root, { recursive: true, force: true }))
  return root
}

/** A layer's folder as an overlay leaves it: an upper folder and a work folder of mode 0 inside. */
function layer(root: string, name: string): string {
  const folder = path.join(root, name)
  fs.mkdirSync(path.join(folder, 'upper'), { recursive: true })
  fs.mkdirSync(path.join(folder, 'work', 'work'), { recursive: true })
  fs.chmodSync(path.join(folder, 'work', 'work'), 0)
  return folder
}

describe('removeLayer', () => {
  it('removes a layer that holds nothing, and one that holds what a program made', async (t) => {
    const root = scratch(t)
    const empty = layer(root, 'empty')
    const full = layer(root, 'full')
    fs.mkdirSync(path.join(full, 'upper', 'src', 'deep'), { recursive: true })
    fs.writeFileSync(path.join(full, 'upper', 'src', 'deep', 'file.txt'), 'made')
    await removeLayer(empty)
    await removeLayer(full)
    assert.deepEqual(fs.readdirSync(root), [])
  })

  it('never removes what a link in the layer points at', async (t) => {
    const root = scratch(t)
    const outside = path.join(root, 'outside')
    fs.mkdirSync(outside)
    fs.writeFileSync(path.join(outside, 'kept.txt'), 'kept')
    const mode = fs.statSync(outside).mode
    const linked = path.join(root, 'linked')
    fs.mkdirSync(path.join(linked, 'work'), { recursive: true })
    fs.symlinkSync(outside, path.join(linked, 'upper'))
    fs.symlinkSync(outside, path.join(linked, 'work', 'work'))
    await removeLayer(linked)
    assert.equal(fs.existsSync(linked), false)
    assert.equal(fs.readFileSync(path.join(outside, 'kept.txt'), 'utf8'), 'kept')
    assert.equal(fs.statSync(outside).mode, mode)
  })

  it('removes each layer of a layers folder even when one cannot be removed whole', async (t) => {
    const root = scratch(t)
    const layers = path.join(root, 'layers')
    layer(layers, '1')
    const second = layer(layers, '2')
    fs.writeFileSync(path.join(second, 'upper', 'file'), 'x')
    await removeLayer(layers, 1)
    assert.equal(fs.existsSync(layers), false)
  })
})

describe('removeMountPoint', () => {
  it('removes an empty point and leaves a folder that holds anything', async (t) => {
    const root = scratch(t)
    fs.mkdirSync(path.join(root, 'empty'))
    fs.mkdirSync(path.join(root, 'held'))
    fs.writeFileSync(path.join(root, 'held', 'file'), 'x')
    await removeMountPoint(path.join(root, 'empty'))
    await removeMountPoint(path.join(root, 'held'))
    assert.deepEqual(fs.readdirSync(root), ['held'])
  })
})
