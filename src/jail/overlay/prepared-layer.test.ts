/**
 * A warm jail's overlay mounted ahead of its command (prepared-layer.ts): it is there while the
 * jail waits, and what changed meanwhile (the host's files, a private path that appeared, a
 * command's own write-back) is what the next command sees.
 */
import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { describe, it, type TestContext } from 'node:test'
import { assertJailAvailable, jailFixture } from '../test-jail.ts'

const bash = (script: string): string[] => ['/bin/bash', '-c', script]

/** A temporary root of the jail's own, so its layers' folder can be looked at. */
function temporaryRoot(t: TestContext): string {
  const root = fs.mkdtempSync(path.join(os.tmpdir(), 'eitri-prepared-test-'))
  t.after(() => fs.rmSync(root, { recursive: true, force: true }))
  return root
}

/** The command layers' folders under the jail's temporary root that an overlay has mounted. */
function mountedLayers(root: string): string[] {
  return fs
    .readdirSync(root)
    .filter((name) => name.includes('layers'))
    .flatMap((name) => {
      const layers = path.join(root, name, 'layers')
      return fs.existsSync(layers) ? fs.readdirSync(layers).map((n) => path.join(layers, n)) : []
    })
    .filter((folder) => fs.existsSync(path.join(folder, 'work', 'work')))
}

describe('an overlay mounted ahead of a warm command', () => {
  it('is mounted while the warm jail waits, after a command that changed nothing', async (t) => {
    const root = temporaryRoot(t)
    const { jail } = await jailFixture(
      t,
      { 'a.txt': 'one' },
      { layers: 'overlay', temporaryRoot: root },
    )
    await assertJailAvailable(jail)
    const result = await jail.run({ command: ['true'], access: 'workspace-write' })
    assert.equal(result.exitCode, 0)
    // The command's own layer is removed just after its answer.
    await new Promise((resolve) => setTimeout(resolve, 200))
    // The overlay makes its `work/work` when it is mounted: one layer waits, mounted.
    assert.equal(mountedLayers(root).length, 1)
  })

  it("shows the next command the host's changes made while it waited", async (t) => {
    const { jail, workspace } = await jailFixture(
      t,
      { 'a.txt': 'one', 'gone.txt': 'x' },
      { layers: 'overlay' },
    )
    await assertJailAvailable(jail)
    assert.equal((await jail.run({ command: ['true'], access: 'workspace-write' })).exitCode, 0)
    fs.writeFileSync(path.join(workspace, 'a.txt'), 'two')
    fs.writeFileSync(path.join(workspace, 'new.txt'), 'new')
    fs.rmSync(path.join(workspace, 'gone.txt'))
    const result = await jail.run({
      command: bash('cat a.txt; echo; cat new.txt; echo; ls'),
      access: 'workspace-write',
    })
    assert.equal(result.stdout, 'two\nnew\na.txt\nnew.txt\n')
  })

  it("shows the next command the previous one's changes, brought back", async (t) => {
    const { jail, workspace } = await jailFixture(t, { 'a.txt': 'one' }, { layers: 'overlay' })
    await assertJailAvailable(jail)
    const first = await jail.run({ command: bash('echo two > a.txt'), access: 'workspace-write' })
    assert.deepEqual(first.sync?.written, ['a.txt'])
    assert.equal(fs.readFileSync(path.join(workspace, 'a.txt'), 'utf8'), 'two\n')
    const second = await jail.run({ command: ['cat', 'a.txt'], access: 'workspace-write' })
    assert.equal(second.stdout, 'two\n')
  })

  it('covers a private path that appeared while it waited', async (t) => {
    const { jail, workspace } = await jailFixture(
      t,
      { 'a.txt': 'one' },
      { layers: 'overlay', privateInside: ['state'] },
    )
    await assertJailAvailable(jail)
    assert.equal((await jail.run({ command: ['true'], access: 'workspace-write' })).exitCode, 0)
    fs.mkdirSync(path.join(workspace, 'state'))
    fs.writeFileSync(path.join(workspace, 'state', 'secret.json'), 'SECRET')
    const result = await jail.run({
      command: bash('cat state/secret.json 2>&1; echo "listed: $(ls -A state 2>&1)"'),
      access: 'workspace-write',
    })
    assert.doesNotMatch(result.stdout, /SECRET/)
    // Covered by an empty folder: nothing in it, to a reader or a lister.
    assert.match(result.stdout, /state\/secret.json: No such file or directory/)
    assert.match(result.stdout, /^listed: $/m)
  })
})
