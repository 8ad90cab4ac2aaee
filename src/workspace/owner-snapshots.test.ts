/**
 * Snapshots taken for a root caller leave out what the workspace's owner may not read
 * (decision 0060). The owner here is a user other than the test's, so the files the test
 * makes are another user's to it, and the test runs as any user.
 */
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { describe, it, type TestContext } from 'node:test'
import { runGit } from './git/run-git.ts'
import { WorkspaceHistory } from './history.ts'

/** Someone else: the test's own files are readable to it only through the others' bits. */
const OWNER = { uid: (process.getuid?.() ?? 0) + 1, gid: (process.getgid?.() ?? 0) + 1 }

async function workspaceWith(t: TestContext, files: Record<string, string>) {
  const root = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'eitri-owner-')))
  const workspace = path.join(root, 'workspace')
  for (const [name, content] of Object.entries(files)) {
    await fs.mkdir(path.dirname(path.join(workspace, name)), { recursive: true, mode: 0o755 })
    await fs.writeFile(path.join(workspace, name), content, { mode: 0o644 })
  }
  const history = await WorkspaceHistory.open({
    stateDir: path.join(root, 'state'),
    workTree: workspace,
    owner: OWNER,
  })
  t.after(async () => {
    history.close()
    await fs.rm(root, { recursive: true, force: true })
  })
  const at = (name: string) => path.join(workspace, name)
  const listFiles = async (tree: string) =>
    (await runGit({ gitDir: history.gitDir }, ['ls-tree', '-r', '--name-only', tree])).stdout
      .toString()
      .split('\n')
      .filter((line) => line !== '')
  return { history, at, files: listFiles }
}

describe('snapshots for a root caller', () => {
  it('leave out a file and a folder the owner may not read, naming the folder only', async (t) => {
    const { history, at, files } = await workspaceWith(t, {
      'open.txt': 'open\n',
      'secret.txt': 'secret\n',
      'private/inner.txt': 'inner\n',
      'private/deeper/more.txt': 'more\n',
      'search-only/known.txt': 'known\n',
    })
    await fs.chmod(at('secret.txt'), 0o600)
    await fs.chmod(at('private'), 0o700)
    // Entered but not listed: its names would show in a fork where the jail cannot list them.
    await fs.chmod(at('search-only'), 0o711)
    const snapshot = await history.snapshotMain()
    assert.deepEqual(snapshot.skipped, ['private/', 'search-only/', 'secret.txt'])
    assert.deepEqual(await files(snapshot.tree), ['open.txt'])
  })

  it('take out a file made unreadable since, seen by a watcher or by a whole look', async (t) => {
    const { history, at, files } = await workspaceWith(t, {
      'a.txt': 'a\n',
      'b.txt': 'b\n',
      'shared/one.txt': 'one\n',
      'shared/two.txt': 'two\n',
    })
    const first = await history.snapshotMain()
    assert.deepEqual(await files(first.tree), [
      'a.txt',
      'b.txt',
      'shared/one.txt',
      'shared/two.txt',
    ])
    await fs.chmod(at('a.txt'), 0o600)
    const watched = await history.snapshotMain({ paths: ['a.txt'] })
    assert.deepEqual(watched.skipped, ['a.txt'])
    assert.deepEqual(await files(watched.tree), ['b.txt', 'shared/one.txt', 'shared/two.txt'])
    // A folder closed, then a file in it changed: all it holds goes, the unchanged file too.
    await fs.chmod(at('shared'), 0o700)
    await fs.writeFile(at('shared/one.txt'), 'changed\n')
    const whole = await history.snapshotMain()
    assert.deepEqual(whole.skipped, ['a.txt', 'shared/'])
    assert.deepEqual(await files(whole.tree), ['b.txt'])
    // Opened again: both come back.
    await fs.chmod(at('shared'), 0o755)
    await fs.chmod(at('a.txt'), 0o644)
    const reopened = await history.snapshotMain()
    assert.deepEqual(reopened.skipped, [])
    assert.deepEqual(await files(reopened.tree), [
      'a.txt',
      'b.txt',
      'shared/one.txt',
      'shared/two.txt',
    ])
  })
  it('take out a closed folder whose name is not UTF-8, with all it held', async (t) => {
    const { history, at, files } = await workspaceWith(t, { 'a.txt': 'a\n' })
    const folder = Buffer.concat([Buffer.from(`${at('')}/caf`), Buffer.from([0xe9])])
    await fs.mkdir(folder, { mode: 0o755 })
    await fs.writeFile(Buffer.concat([folder, Buffer.from('/x.txt')]), 'x\n', { mode: 0o644 })
    const open = await history.snapshotMain()
    assert.equal((await files(open.tree)).length, 2)
    await fs.chmod(folder, 0o700)
    const closed = await history.snapshotMain()
    assert.deepEqual(await files(closed.tree), ['a.txt'])
    assert.equal(closed.skipped.length, 1)
  })
})
