import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { describe, it, type TestContext } from 'node:test'
import { EitriError } from '../errors/eitri-error.ts'
import { ForkTree, type ForkTreeOptions } from './fork-tree.ts'
import { encodeTree } from './git/git-objects.ts'
import { ObjectStore } from './git/object-store.ts'

const text = (value: string) => new TextEncoder().encode(value)
const read = async (tree: ForkTree, file: string) =>
  new TextDecoder().decode(await tree.readFile(file))

/** A bare repository with a base tree of `a.txt` and `src/b.txt`, and a fork tree over it. */
function fixture(t: TestContext, options: Partial<ForkTreeOptions> = {}) {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'eitri-fork-tree-test-'))
  const gitDir = path.join(root, 'history.git')
  execFileSync('git', ['init', '-q', '--bare', gitDir])
  const store = new ObjectStore(gitDir)
  t.after(() => {
    store.close()
    fs.rmSync(root, { recursive: true, force: true })
  })
  const blob = (value: string) => store.write('blob', text(value))
  const src = store.write('tree', encodeTree([{ name: 'b.txt', kind: 'file', oid: blob('b\n') }]))
  const baseTree = store.write(
    'tree',
    encodeTree([
      { name: 'a.txt', kind: 'file', oid: blob('a\n') },
      { name: 'src', kind: 'directory', oid: src },
    ]),
  )
  const logFile = path.join(root, 'writes.jsonl')
  const make = (more: Partial<ForkTreeOptions> = {}) =>
    new ForkTree({ store, baseTree, logFile, baseTime: 1_000, ...options, ...more })
  return { store, baseTree, logFile, make }
}

describe('ForkTree', () => {
  it('reads its base tree, then its own writes above it, copying nothing', async (t) => {
    const { make } = fixture(t)
    const tree = make()
    assert.equal(await read(tree, 'src/b.txt'), 'b\n')
    assert.equal(tree.clean, true)
    await tree.writeFileAtomic('src/b.txt', text('changed\n'))
    await tree.writeFileAtomic('new/c.txt', text('c\n'))
    await tree.remove('a.txt')
    assert.equal(await read(tree, 'src/b.txt'), 'changed\n')
    assert.equal(await read(tree, 'new/c.txt'), 'c\n')
    assert.equal(await tree.stat('a.txt'), undefined)
    assert.deepEqual(
      (await tree.list('')).map((entry) => entry.name),
      ['new', 'src'],
    )
    assert.equal(tree.clean, false)
  })

  it('asks git once for a base file that is stat-ed and then read (grep does both)', async (t) => {
    const { make, store } = fixture(t)
    const tree = make()
    await tree.list('src')
    const before = store.fetched
    assert.equal((await tree.stat('src/b.txt'))?.size, 2)
    assert.equal(await read(tree, 'src/b.txt'), 'b\n')
    assert.equal((await tree.stat('src/b.txt'))?.size, 2)
    assert.equal(store.fetched - before, 1)
  })

  it('comes back from its write log in a new process as it was', async (t) => {
    const { make } = fixture(t)
    const first = make()
    await first.writeFileAtomic('src/b.txt', text('logged\n'))
    await first.remove('a.txt')
    const again = make()
    assert.equal(await read(again, 'src/b.txt'), 'logged\n')
    assert.equal(await again.stat('a.txt'), undefined)
    assert.equal(again.usedBytes, first.usedBytes)
    assert.equal(await again.writeTree(), await first.writeTree())
  })

  it('keeps each write’s time, and the base time for what it never wrote', async (t) => {
    const { make } = fixture(t)
    const tree = make()
    const before = Date.now()
    await tree.writeFileAtomic('a.txt', text('new\n'))
    assert.ok(((await tree.modifiedMs('a.txt')) ?? 0) >= before - 1_000)
    assert.equal(await tree.modifiedMs('src/b.txt'), 1_000)
    assert.equal(await tree.modifiedMs('missing'), undefined)
  })

  it('starts over from a commit’s tree: the log is emptied', async (t) => {
    const { make, logFile } = fixture(t)
    const tree = make()
    await tree.writeFileAtomic('a.txt', text('committed\n'))
    const written = await tree.writeTree()
    tree.rebase(written)
    assert.equal(tree.clean, true)
    assert.equal(fs.readFileSync(logFile, 'utf8'), '')
    assert.equal(await read(tree, 'a.txt'), 'committed\n')
  })

  it('refuses writes past its quota, and any write when read-only or frozen', async (t) => {
    const { make } = fixture(t)
    const small = make({ quotaBytes: 4 })
    await assert.rejects(
      small.writeFileAtomic('big.txt', text('more than four')),
      (error) => EitriError.isInstance(error) && error.code === 'quota_exceeded',
    )
    assert.equal(await small.stat('big.txt'), undefined)
    const readOnly = make({ readOnly: true })
    await assert.rejects(
      readOnly.writeFileAtomic('x.txt', text('x')),
      (error) => EitriError.isInstance(error) && error.code === 'read_only_access',
    )
    const frozen = make()
    frozen.freeze('merged into main')
    await assert.rejects(
      frozen.remove('a.txt'),
      (error) => EitriError.isInstance(error) && /merged into main/.test(error.message),
    )
    assert.equal(await read(frozen, 'a.txt'), 'a\n')
  })

  it('gives each reader its own bytes: a change in place never reaches the next read', async (t) => {
    const { make } = fixture(t)
    const tree = make()
    const first = await tree.readFile('a.txt')
    first.fill(0x58)
    assert.equal(await read(tree, 'a.txt'), 'a\n')
  })
})
