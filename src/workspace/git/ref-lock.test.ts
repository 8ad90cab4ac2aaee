import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { describe, it, type TestContext } from 'node:test'
import { fileURLToPath } from 'node:url'
import { DRIVE_REF } from '../blob-drive.ts'
import { forkRef } from '../fork-registry.ts'
import { MAIN_REF, WorkspaceHistory } from '../history.ts'
import { runGit } from './run-git.ts'

const WRITER = fileURLToPath(new URL('../../../test/fixtures/ref-writer.ts', import.meta.url))

/** A history of a small workspace, main snapshotted once, and two more commits to move to. */
async function repository(t: TestContext) {
  const base = fs.mkdtempSync(path.join(os.tmpdir(), 'eitri-ref-lock-'))
  const workTree = path.join(base, 'work')
  fs.mkdirSync(workTree)
  fs.writeFileSync(path.join(workTree, 'a.txt'), 'one\n')
  const stateDir = path.join(base, 'state')
  const history = await WorkspaceHistory.open({ stateDir, workTree })
  t.after(() => {
    history.close()
    fs.rmSync(base, { recursive: true, force: true })
  })
  const first = (await history.snapshotMain()).commit
  const tree = await history.treeOf(first)
  const second = history.commit(tree, [first], 'two')
  const gitSays = async (ref: string) => {
    const output = await runGit({ gitDir: history.gitDir }, ['rev-parse', '--verify', '-q', ref], {
      check: false,
    })
    return output.status === 0 ? output.stdout.toString().trim() : undefined
  }
  return { history, gitDir: history.gitDir, stateDir, workTree, first, second, gitSays }
}

/** Starts the writer child moving `ref` from `expected` to `commit`, stopping as `mode` says. */
function writer(gitDir: string, ref: string, commit: string, expected: string, mode: string) {
  const child = spawn(process.execPath, [WRITER, gitDir, ref, commit, expected, mode], {
    stdio: ['pipe', 'pipe', 'inherit'],
  })
  let out = ''
  const said = (line: string) =>
    new Promise<void>((resolve, reject) => {
      const look = () => (out.includes(line) ? resolve() : undefined)
      child.stdout.on('data', (chunk: Buffer) => {
        out += chunk.toString()
        look()
      })
      child.on('exit', () => (out.includes(line) ? resolve() : reject(new Error(`said ${out}`))))
    })
  const ended = new Promise<NodeJS.Signals | number | null>((resolve) =>
    child.on('exit', (code, signal) => resolve(signal ?? code)),
  )
  return { child, said, ended }
}

const records = (gitDir: string) => fs.readdirSync(path.join(gitDir, 'eitri-ref-locks'))

describe('reference locks left by a killed writer', () => {
  for (const ref of [MAIN_REF, forkRef('f-0123abcd'), DRIVE_REF]) {
    it(`a writer killed holding ${ref}'s lock does not block the next move`, async (t) => {
      const { history, gitDir, stateDir, workTree, first, second, gitSays } = await repository(t)
      if (ref !== MAIN_REF) await history.updateRef(ref, first)
      const { ended } = writer(gitDir, ref, second, first, 'die-locked')
      assert.equal(await ended, 'SIGKILL')
      // What the crash left: the lock, holding the new value, and the ref unmoved.
      const lockFile = path.join(gitDir, `${ref}.lock`)
      assert.equal(fs.readFileSync(lockFile, 'utf8'), `${second}\n`)
      assert.equal(await gitSays(ref), first)
      // The history opened anew (as a reopen's journal recovery does) moves it again.
      const reopened = await WorkspaceHistory.open({ stateDir, workTree })
      t.after(() => reopened.close())
      const third = history.commit(await history.treeOf(first), [first], 'three')
      await reopened.updateRef(ref, third, first)
      assert.equal(await gitSays(ref), third)
      assert.equal(fs.existsSync(lockFile), false, 'the stale lock is gone')
      assert.deepEqual(records(gitDir), [], 'no owner record left')
      // git itself moves it too now (it was refused: "Unable to create … .lock: File exists").
      await runGit({ gitDir }, ['update-ref', ref, first, third])
      assert.equal(await gitSays(ref), first)
    })
  }

  it("journal recovery's snapshot of main succeeds after a writer was killed holding main's lock", async (t) => {
    const { history, gitDir, stateDir, workTree, first, second, gitSays } = await repository(t)
    assert.equal(await writer(gitDir, MAIN_REF, second, first, 'die-locked').ended, 'SIGKILL')
    fs.writeFileSync(path.join(workTree, 'a.txt'), 'restored\n')
    history.close()
    const reopened = await WorkspaceHistory.open({ stateDir, workTree })
    t.after(() => reopened.close())
    const snapshot = await reopened.snapshotMain({ paths: ['a.txt'], message: 'restore' })
    assert.equal(await gitSays(MAIN_REF), snapshot.commit)
    assert.notEqual(snapshot.commit, first)
    assert.equal(fs.existsSync(path.join(gitDir, `${MAIN_REF}.lock`)), false)
  })

  it('a writer killed after its rename leaves an owner record that the next process sweeps', async (t) => {
    const { gitDir, first, second, gitSays } = await repository(t)
    const ref = forkRef('f-0badcafe')
    assert.equal(await writer(gitDir, ref, second, '', 'die-moved').ended, 'SIGKILL')
    assert.equal(await gitSays(ref), second, 'the move itself was done')
    assert.equal(records(gitDir).length, 1, 'its record was left')
    // A fresh process's first lock sweeps it, and the ref moves as usual.
    const child = writer(gitDir, ref, first, second, 'finish')
    await child.said('moved')
    assert.deepEqual(records(gitDir), [])
    assert.equal(await gitSays(ref), first)
  })
})

describe('reference locks a live writer holds', () => {
  it('are respected: nothing moves here, and the writer then finishes its own move', async (t) => {
    const { history, gitDir, first, second, gitSays } = await repository(t)
    const live = writer(gitDir, MAIN_REF, second, first, 'hold')
    t.after(() => live.child.kill('SIGKILL'))
    await live.said('locked')
    const third = history.commit(await history.treeOf(first), [first], 'three')
    await assert.rejects(history.updateRef(MAIN_REF, third, first), /File exists/)
    assert.equal(await gitSays(MAIN_REF), first)
    assert.ok(fs.existsSync(path.join(gitDir, `${MAIN_REF}.lock`)), "the writer's lock stays")
    live.child.stdin.end('\n')
    await live.said('moved')
    assert.equal(await gitSays(MAIN_REF), second)
    assert.deepEqual(records(gitDir), [])
  })

  it("a lock with no owner record (git's, a person's) is never taken, however old", async (t) => {
    const { history, gitDir, first, second, gitSays } = await repository(t)
    const lockFile = path.join(gitDir, `${MAIN_REF}.lock`)
    fs.writeFileSync(lockFile, `${second}\n`)
    fs.utimesSync(lockFile, new Date(0), new Date(0))
    await assert.rejects(history.updateRef(MAIN_REF, second, first), /File exists/)
    assert.equal(fs.readFileSync(lockFile, 'utf8'), `${second}\n`)
    assert.equal(await gitSays(MAIN_REF), first)
  })
})
