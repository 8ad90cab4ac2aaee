import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { describe, it, type TestContext } from 'node:test'
import { EXECUTE_ONLY_MODE, executeOnlyCopy } from './execute-only-copy.ts'

function scratch(t: TestContext): string {
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'eitri-test-execute-only-'))
  t.after(() => fs.rmSync(folder, { recursive: true, force: true }))
  return folder
}

/** `copy` lies in a 0711 folder of this process's own with a random name, execute-only. */
function assertPrivateCopy(copy: string, root: string): void {
  const folder = path.dirname(copy)
  assert.equal(path.dirname(folder), root)
  assert.match(path.basename(folder), /^eitri-execute-only-\d+\.\d+-[A-Za-z0-9]{6}$/)
  assert.equal(fs.statSync(folder).mode & 0o7777, 0o711)
  assert.equal(fs.statSync(folder).uid, process.getuid?.())
  assert.equal(fs.statSync(copy).mode & 0o7777, EXECUTE_ONLY_MODE)
}

describe('executeOnlyCopy', () => {
  it('copies a program once, execute-only, into a 0711 folder of the caller, and reuses the copy', async (t) => {
    const root = scratch(t)
    const source = path.join(root, 'program')
    fs.writeFileSync(source, 'first version\n', { mode: 0o755 })
    const copy = await executeOnlyCopy(source, root)
    assert.equal(path.dirname(copy), path.join(root, `eitri-execute-only-${process.getuid?.()}`))
    assert.equal(fs.statSync(copy).mode & 0o7777, EXECUTE_ONLY_MODE)
    assert.equal(fs.statSync(path.dirname(copy)).mode & 0o7777, 0o711)
    assert.equal(fs.statSync(copy).uid, process.getuid?.())
    // Made again in another process, it is the same file, not a second copy.
    const inode = fs.statSync(copy).ino
    assert.equal(await executeOnlyCopy(source, root), copy)
    assert.equal(fs.statSync(copy).ino, inode)
    // A new version at the same path gets a copy of its own, and the old one goes.
    fs.writeFileSync(source, 'second version, longer\n')
    const second = await executeOnlyCopy(source, root)
    assert.notEqual(second, copy)
    assert.deepEqual(fs.readdirSync(path.dirname(copy)), [path.basename(second)])
    fs.chmodSync(second, 0o400)
    assert.equal(fs.readFileSync(second, 'utf8'), 'second version, longer\n')
  })

  it('makes the copy in a folder of its own when one of that name is open to others, or a link', async (t) => {
    const root = scratch(t)
    const source = path.join(root, 'program')
    fs.writeFileSync(source, 'x\n', { mode: 0o755 })
    const folder = path.join(root, `eitri-execute-only-${process.getuid?.()}`)
    // Made first by another account, as it could: its copy would be theirs to swap.
    fs.mkdirSync(folder)
    fs.chmodSync(folder, 0o777)
    const copy = await executeOnlyCopy(source, root)
    assert.deepEqual(fs.readdirSync(folder), [])
    assertPrivateCopy(copy, root)
    fs.rmdirSync(folder)
    const elsewhere = path.join(root, 'elsewhere')
    fs.mkdirSync(elsewhere, { mode: 0o711 })
    fs.chmodSync(elsewhere, 0o711)
    fs.symlinkSync(elsewhere, folder)
    assert.equal(await executeOnlyCopy(source, root), copy)
    assert.deepEqual(fs.readdirSync(elsewhere), [])
    // The control: once the link is gone, the copy is made in the shared folder.
    fs.unlinkSync(folder)
    assert.equal(path.dirname(await executeOnlyCopy(source, root)), folder)
  })

  it('replaces a copy that is not execute-only', async (t) => {
    const root = scratch(t)
    const source = path.join(root, 'program')
    fs.writeFileSync(source, 'x\n', { mode: 0o755 })
    const copy = await executeOnlyCopy(source, root)
    fs.chmodSync(copy, 0o755)
    assert.equal(await executeOnlyCopy(source, root), copy)
    assert.equal(fs.statSync(copy).mode & 0o7777, EXECUTE_ONLY_MODE)
  })

  it(
    'refuses a copy it cannot execute where it lies (a noexec folder)',
    { skip: process.getuid?.() !== 0 && 'mounting a noexec folder needs root' },
    async (t) => {
      const root = scratch(t)
      const source = path.join(root, 'program')
      fs.writeFileSync(source, 'x\n', { mode: 0o755 })
      // Positive control: on the scratch folder's own mount the copy is made.
      await executeOnlyCopy(source, root)
      const noexec = fs.mkdtempSync(path.join(os.tmpdir(), 'eitri-test-noexec-'))
      execFileSync('mount', ['-t', 'tmpfs', '-o', 'noexec,size=1m', 'tmpfs', noexec])
      t.after(() => {
        execFileSync('umount', ['-l', noexec])
        fs.rmdirSync(noexec)
      })
      await assert.rejects(executeOnlyCopy(source, noexec), /cannot be executed there/)
    },
  )

  it('finds a bare name on the launch PATH, and keeps a set-user-ID program as it is', async (t) => {
    const root = scratch(t)
    const copy = await executeOnlyCopy('bwrap', root)
    assert.match(path.basename(copy), /^bwrap-/)
    assert.equal(fs.statSync(copy).size, fs.statSync(fs.realpathSync('/usr/bin/bwrap')).size)
    const setuid = path.join(root, 'setuid-program')
    fs.writeFileSync(setuid, 'x\n')
    fs.chmodSync(setuid, 0o4755)
    assert.equal(await executeOnlyCopy(setuid, root), setuid)
  })
})
