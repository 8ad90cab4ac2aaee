import assert from 'node:assert/strict'
import fs from 'node:fs'
import fsPromises from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { describe, it, type TestContext } from 'node:test'
import { WorkspaceHistory } from '../history.ts'
import { deleteLooseRef, deleteLooseRefAsync, moveLooseRef } from './loose-refs.ts'
import { gitCommandsStarted, runGit } from './run-git.ts'

/** A history repository with two commits, and a reader of refs that asks git itself. */
async function repository(t: TestContext) {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), 'eitri-refs-'))
  const history = await WorkspaceHistory.open({ stateDir: base, workTree: base })
  t.after(() => {
    history.close()
    fs.rmSync(base, { recursive: true, force: true })
  })
  const tree = history.store.write('tree', Buffer.alloc(0))
  const first = history.commit(tree, [], 'one')
  const second = history.commit(tree, [first], 'two')
  const gitSays = async (ref: string) => {
    const output = await runGit({ gitDir: history.gitDir }, ['rev-parse', '--verify', '-q', ref], {
      check: false,
    })
    return output.status === 0 ? output.stdout.toString().trim() : undefined
  }
  return { history, gitDir: history.gitDir, first, second, gitSays }
}

const REF = 'refs/eitri/forks/f-0123abcd'

describe('loose references without git', () => {
  it('creates, moves and deletes a reference as git reads it, starting no git process', async (t) => {
    const { history, gitDir, first, second, gitSays } = await repository(t)
    const before = gitCommandsStarted()
    await history.updateRef(REF, first)
    await history.updateRef(REF, second, first)
    const spawned = gitCommandsStarted() - before
    assert.equal(await gitSays(REF), second)
    await history.deleteRef(REF)
    assert.equal(await gitSays(REF), undefined)
    assert.equal(spawned, 0)
    assert.equal(fs.existsSync(path.join(gitDir, `${REF}.lock`)), false, 'no lock left behind')
  })

  it('deletes a reference with its removals on the thread pool, the thread free meanwhile', async (t) => {
    const { history, gitDir, first, gitSays } = await repository(t)
    await history.updateRef(REF, first)
    const removed: string[] = []
    const rm = fsPromises.rm
    t.mock.method(fsPromises, 'rm', async (file: string, options: fs.RmOptions) => {
      removed.push(path.basename(file))
      return rm(file, options)
    })
    const before = gitCommandsStarted()
    const deleting = history.deleteRef(REF)
    removed.push('thread free')
    await deleting
    assert.deepEqual(removed, ['thread free', 'f-0123abcd', 'f-0123abcd.lock'])
    assert.equal(gitCommandsStarted() - before, 0)
    assert.equal(await gitSays(REF), undefined)
    assert.equal(await deleteLooseRefAsync(gitDir, REF), true, 'nothing left to delete')
    await history.updateRef(REF, first)
    fs.writeFileSync(path.join(gitDir, `${REF}.lock`), '')
    assert.equal(await deleteLooseRefAsync(gitDir, REF), false, 'another writer holds its lock')
    assert.equal(await gitSays(REF), first)
    assert.ok(fs.existsSync(path.join(gitDir, `${REF}.lock`)), "the writer's lock stays")
  })

  it('a reference that names something else is left to git, which refuses it as before', async (t) => {
    const { history, gitDir, first, second, gitSays } = await repository(t)
    await history.updateRef(REF, first)
    assert.equal(moveLooseRef(gitDir, REF, second, undefined), false, 'it exists already')
    assert.equal(moveLooseRef(gitDir, REF, second, second), false, 'it names first')
    await assert.rejects(history.updateRef(REF, second), /update-ref failed/)
    await assert.rejects(history.updateRef(REF, first, second), /update-ref failed/)
    assert.equal(await gitSays(REF), first, 'unchanged by the refused moves')
    assert.equal(fs.existsSync(path.join(gitDir, `${REF}.lock`)), false)
  })

  it("a lock another writer holds is respected: nothing moves, and the lock stays the writer's", async (t) => {
    const { gitDir, first, gitSays } = await repository(t)
    fs.mkdirSync(path.dirname(path.join(gitDir, REF)), { recursive: true })
    fs.writeFileSync(path.join(gitDir, `${REF}.lock`), '')
    assert.equal(moveLooseRef(gitDir, REF, first, undefined), false)
    assert.equal(deleteLooseRef(gitDir, REF), false)
    assert.equal(fs.existsSync(path.join(gitDir, `${REF}.lock`)), true)
    assert.equal(await gitSays(REF), undefined)
    // Positive control: without the other writer's lock the same move is done here.
    fs.rmSync(path.join(gitDir, `${REF}.lock`))
    assert.equal(moveLooseRef(gitDir, REF, first, undefined), true)
    assert.equal(await gitSays(REF), first)
  })

  it('a packed reference, or a repository that logs reference updates, is left to git', async (t) => {
    const { history, gitDir, first, second, gitSays } = await repository(t)
    await history.updateRef(REF, first)
    await runGit({ gitDir }, ['pack-refs', '--all'])
    assert.equal(fs.existsSync(path.join(gitDir, REF)), false, 'packed now')
    assert.equal(moveLooseRef(gitDir, REF, second, undefined), false)
    assert.equal(deleteLooseRef(gitDir, REF), false)
    await history.deleteRef(REF)
    assert.equal(await gitSays(REF), undefined, 'git deleted the packed reference')
    await runGit({ gitDir }, ['config', 'core.logAllRefUpdates', 'always'])
    assert.equal(moveLooseRef(gitDir, REF, first, undefined), false)
    await history.updateRef(REF, first)
    assert.equal(await gitSays(REF), first)
    assert.equal(fs.existsSync(path.join(gitDir, 'logs', REF)), true, 'git wrote its log')
  })
})
