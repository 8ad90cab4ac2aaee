import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { describe, it, type TestContext } from 'node:test'
import { EitriError } from '../errors/eitri-error.ts'
import { DirectoryTree } from './directory-tree.ts'

/** A per-test temporary folder holding the tree's folder `root` and a sibling `outside`. */
async function makeFixture(
  t: TestContext,
): Promise<{ base: string; root: string; outside: string }> {
  const base = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'eitri-tree-')))
  t.after(() => fs.rm(base, { recursive: true, force: true }))
  const root = path.join(base, 'root')
  const outside = path.join(base, 'outside')
  await fs.mkdir(root)
  await fs.mkdir(outside)
  return { base, root, outside }
}

const bytes = (text: string): Uint8Array => Buffer.from(text, 'utf8')

async function assertRejectsWith(promise: Promise<unknown>, code: string): Promise<void> {
  await assert.rejects(promise, (error: unknown) => {
    assert.ok(EitriError.isInstance(error), `expected an EitriError, got ${String(error)}`)
    assert.equal(error.code, code)
    return true
  })
}

describe('DirectoryTree', () => {
  it('takes the real path of its folder as root', async (t) => {
    const { base, root } = await makeFixture(t)
    await fs.symlink(root, path.join(base, 'alias'))
    const tree = new DirectoryTree(path.join(base, 'alias'))
    assert.equal(tree.root, root)
    assert.equal(tree.hostPath(''), root)
    assert.equal(tree.hostPath('a/b'), path.join(root, 'a/b'))
  })

  it('reads small files synchronously and large ones asynchronously, byte for byte', async (t) => {
    const { root } = await makeFixture(t)
    const small = Buffer.from('small file\n')
    const large = Buffer.alloc(3 * 1024 * 1024 + 7)
    for (let index = 0; index < large.length; index++) large[index] = index % 251
    await fs.writeFile(path.join(root, 'small.txt'), small)
    await fs.writeFile(path.join(root, 'large.bin'), large)
    const tree = new DirectoryTree(root)
    assert.deepEqual(Buffer.from(await tree.readFile('small.txt')), small)
    assert.deepEqual(Buffer.from(await tree.readFile('large.bin')), large)
    await fs.writeFile(path.join(root, 'empty'), '')
    assert.equal((await tree.readFile('empty')).byteLength, 0)
  })

  it('refuses a folder that does not exist', async (t) => {
    const { base } = await makeFixture(t)
    assert.throws(
      () => new DirectoryTree(path.join(base, 'missing')),
      (error: unknown) => EitriError.isInstance(error) && error.code === 'not_found',
    )
  })

  describe('writeFileAtomic', () => {
    it('creates missing folders and reports a new file', async (t) => {
      const { root } = await makeFixture(t)
      const tree = new DirectoryTree(root)
      assert.deepEqual(await tree.writeFileAtomic('a/b/c.txt', bytes('hello\n')), { created: true })
      assert.equal(await fs.readFile(path.join(root, 'a/b/c.txt'), 'utf8'), 'hello\n')
      assert.ok((await fs.stat(path.join(root, 'a/b'))).isDirectory())
    })

    it('replaces the content of an existing file and reports it as not new', async (t) => {
      const { root } = await makeFixture(t)
      await fs.writeFile(path.join(root, 'f.txt'), 'a much longer old content\n')
      const tree = new DirectoryTree(root)
      assert.deepEqual(await tree.writeFileAtomic('f.txt', bytes('new')), { created: false })
      assert.equal(await fs.readFile(path.join(root, 'f.txt'), 'utf8'), 'new')
    })

    it('writes bytes exactly, NUL and invalid UTF-8 included', async (t) => {
      const { root } = await makeFixture(t)
      const data = Uint8Array.from([0, 1, 0xff, 0xfe, 10, 0xc3])
      await new DirectoryTree(root).writeFileAtomic('blob.bin', data)
      assert.deepEqual(new Uint8Array(await fs.readFile(path.join(root, 'blob.bin'))), data)
    })

    for (const mode of [0o755, 0o600, 0o640]) {
      it(`keeps an existing file's mode ${mode.toString(8)}`, async (t) => {
        const { root } = await makeFixture(t)
        const file = path.join(root, 'script.sh')
        await fs.writeFile(file, '#!/bin/sh\n')
        await fs.chmod(file, mode)
        await new DirectoryTree(root).writeFileAtomic('script.sh', bytes('#!/bin/sh\necho hi\n'))
        assert.equal((await fs.stat(file)).mode & 0o7777, mode)
        assert.equal(await fs.readFile(file, 'utf8'), '#!/bin/sh\necho hi\n')
      })
    }

    it('leaves no temporary file behind', async (t) => {
      const { root } = await makeFixture(t)
      const tree = new DirectoryTree(root)
      await tree.writeFileAtomic('dir/one.txt', bytes('1'))
      await tree.writeFileAtomic('dir/one.txt', bytes('11'))
      await tree.writeFileAtomic('dir/two.txt', bytes('2'))
      await tree.writeFileAtomic('top.txt', bytes('3'))
      assert.deepEqual((await fs.readdir(path.join(root, 'dir'))).sort(), ['one.txt', 'two.txt'])
      assert.deepEqual((await fs.readdir(root)).sort(), ['dir', 'top.txt'])
    })

    it('refuses to write through a regular file used as a folder', async (t) => {
      const { root } = await makeFixture(t)
      await fs.writeFile(path.join(root, 'file.txt'), 'keep\n')
      const tree = new DirectoryTree(root)
      await assertRejectsWith(
        tree.writeFileAtomic('file.txt/inner.txt', bytes('x')),
        'not_directory',
      )
      await assertRejectsWith(tree.writeFileAtomic('file.txt/a/b.txt', bytes('x')), 'not_directory')
      assert.equal(await fs.readFile(path.join(root, 'file.txt'), 'utf8'), 'keep\n')
      assert.deepEqual(await fs.readdir(root), ['file.txt'])
    })

    it('refuses a folder as the target and leaves it and no temporary file', async (t) => {
      const { root } = await makeFixture(t)
      await fs.mkdir(path.join(root, 'folder'))
      await fs.writeFile(path.join(root, 'folder/inside.txt'), 'inside\n')
      const tree = new DirectoryTree(root)
      await assertRejectsWith(tree.writeFileAtomic('folder', bytes('x')), 'is_directory')
      assert.deepEqual(await fs.readdir(path.join(root, 'folder')), ['inside.txt'])
      assert.deepEqual(await fs.readdir(root), ['folder'])
    })

    it('does not create folders through a linked folder', async (t) => {
      const { root, outside } = await makeFixture(t)
      await fs.symlink(outside, path.join(root, 'out'))
      const tree = new DirectoryTree(root)
      await assertRejectsWith(tree.writeFileAtomic('out/planted.txt', bytes('x')), 'not_directory')
      await assertRejectsWith(
        tree.writeFileAtomic('out/new/planted.txt', bytes('x')),
        'not_directory',
      )
      assert.deepEqual(await fs.readdir(outside), [])
    })

    it('replaces a final link itself rather than writing where it points', async (t) => {
      const { root, outside } = await makeFixture(t)
      await fs.writeFile(path.join(outside, 'target.txt'), 'outside\n')
      await fs.symlink(path.join(outside, 'target.txt'), path.join(root, 'link.txt'))
      const result = await new DirectoryTree(root).writeFileAtomic('link.txt', bytes('inside\n'))
      assert.deepEqual(result, { created: false })
      assert.equal(await fs.readFile(path.join(outside, 'target.txt'), 'utf8'), 'outside\n')
      assert.ok((await fs.lstat(path.join(root, 'link.txt'))).isFile())
      assert.equal(await fs.readFile(path.join(root, 'link.txt'), 'utf8'), 'inside\n')
    })
  })

  describe('readFile', () => {
    it('reads a regular file', async (t) => {
      const { root } = await makeFixture(t)
      await fs.mkdir(path.join(root, 'd'))
      await fs.writeFile(path.join(root, 'd/f.txt'), 'content\n')
      const read = await new DirectoryTree(root).readFile('d/f.txt')
      assert.equal(Buffer.from(read).toString('utf8'), 'content\n')
    })

    it('refuses a symbolic link as the final component', async (t) => {
      const { root, outside } = await makeFixture(t)
      await fs.writeFile(path.join(outside, 'secret.txt'), 'SECRET\n')
      await fs.writeFile(path.join(root, 'real.txt'), 'real\n')
      await fs.symlink(path.join(outside, 'secret.txt'), path.join(root, 'out.txt'))
      await fs.symlink('real.txt', path.join(root, 'in.txt'))
      const tree = new DirectoryTree(root)
      await assert.rejects(tree.readFile('out.txt'), { code: 'ELOOP' })
      await assert.rejects(tree.readFile('in.txt'), { code: 'ELOOP' })
    })
  })

  describe('list', () => {
    it('lists names sorted by code unit, with kinds, not following links', async (t) => {
      const { root } = await makeFixture(t)
      for (const name of ['b', 'a', 'C', '10', '2', '.hidden']) {
        await fs.writeFile(path.join(root, name), '')
      }
      await fs.mkdir(path.join(root, 'folder'))
      await fs.symlink('folder', path.join(root, 'link'))
      assert.deepEqual(await new DirectoryTree(root).list(''), [
        { name: '.hidden', type: 'file' },
        { name: '10', type: 'file' },
        { name: '2', type: 'file' },
        { name: 'C', type: 'file' },
        { name: 'a', type: 'file' },
        { name: 'b', type: 'file' },
        { name: 'folder', type: 'directory' },
        { name: 'link', type: 'symlink' },
      ])
    })

    it('lists a subfolder', async (t) => {
      const { root } = await makeFixture(t)
      await fs.mkdir(path.join(root, 'sub/deeper'), { recursive: true })
      await fs.writeFile(path.join(root, 'sub/z.txt'), '')
      assert.deepEqual(await new DirectoryTree(root).list('sub'), [
        { name: 'deeper', type: 'directory' },
        { name: 'z.txt', type: 'file' },
      ])
    })
  })

  describe('stat and kind', () => {
    it('describes a link as a link, without following it', async (t) => {
      const { root } = await makeFixture(t)
      await fs.mkdir(path.join(root, 'folder'))
      await fs.writeFile(path.join(root, 'file.txt'), '12345')
      await fs.symlink('folder', path.join(root, 'to-folder'))
      await fs.symlink('file.txt', path.join(root, 'to-file'))
      await fs.symlink('/nonexistent-eitri/x', path.join(root, 'dangling'))
      const tree = new DirectoryTree(root)
      assert.equal((await tree.stat('to-folder'))?.type, 'symlink')
      assert.equal((await tree.stat('to-file'))?.type, 'symlink')
      assert.equal((await tree.stat('dangling'))?.type, 'symlink')
      assert.equal(await tree.kind('to-folder'), 'symlink')
      assert.equal(await tree.kind('dangling'), 'symlink')
      assert.equal(await tree.readlink('dangling'), '/nonexistent-eitri/x')
    })

    it('answers undefined below a link that leads to itself, as below a file', async (t) => {
      const { root } = await makeFixture(t)
      await fs.symlink('loop', path.join(root, 'loop'))
      await fs.writeFile(path.join(root, 'file.txt'), 'x')
      const tree = new DirectoryTree(root)
      assert.equal((await tree.stat('loop'))?.type, 'symlink')
      assert.equal(await tree.stat('loop/x'), undefined)
      assert.equal(await tree.kind('loop/x/y'), undefined)
      assert.equal(await tree.stat('file.txt/x'), undefined)
    })

    it('describes files and folders, and answers undefined for what is missing', async (t) => {
      const { root } = await makeFixture(t)
      await fs.mkdir(path.join(root, 'folder'))
      await fs.writeFile(path.join(root, 'file.txt'), '12345')
      await fs.chmod(path.join(root, 'file.txt'), 0o640)
      const tree = new DirectoryTree(root)
      const file = await tree.stat('file.txt')
      assert.equal(file?.type, 'file')
      assert.equal(file?.size, 5)
      assert.equal(file?.mode, 0o640)
      assert.equal((await tree.stat(''))?.type, 'directory')
      assert.equal(await tree.kind('folder'), 'directory')
      assert.equal(await tree.kind('file.txt'), 'other')
      assert.equal(await tree.stat('missing'), undefined)
      assert.equal(await tree.stat('file.txt/below'), undefined)
      assert.equal(await tree.kind('missing/below'), undefined)
    })
  })
})
