import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { describe, it, type TestContext } from 'node:test'
import { fileURLToPath } from 'node:url'
import { runGit } from './git/run-git.ts'
import { MAIN_REF, WorkspaceHistory } from './history.ts'
import { mainSnapshotLockFile } from './main-snapshot-lock.ts'

const SNAPSHOTTER = fileURLToPath(
  new URL('../../test/fixtures/main-snapshotter.ts', import.meta.url),
)

/** A state folder and a small workspace, main not snapshotted yet. */
function shared(t: TestContext) {
  const base = fs.realpathSync(fs.mkdtempSync(path.join(os.tmpdir(), 'eitri-main-lock-')))
  const workTree = path.join(base, 'work')
  fs.mkdirSync(workTree)
  fs.writeFileSync(path.join(workTree, 'a.txt'), 'a\n')
  t.after(() => fs.rmSync(base, { recursive: true, force: true }))
  return { stateDir: path.join(base, 'state'), workTree }
}

/** Starts the snapshotter child; `said(text)` resolves once it printed `text`. */
function snapshotter(
  stateDir: string,
  workTree: string,
  name: string,
  rounds: number,
  mode: string,
) {
  const child = spawn(
    process.execPath,
    [SNAPSHOTTER, stateDir, workTree, name, String(rounds), mode],
    {
      stdio: ['pipe', 'pipe', 'inherit'],
    },
  )
  let out = ''
  child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()))
  const ended = new Promise<NodeJS.Signals | number | null>((resolve) =>
    child.on('exit', (code, signal) => resolve(signal ?? code)),
  )
  const said = async (text: string) => {
    while (!out.includes(text)) {
      if (child.exitCode !== null || child.signalCode !== null) throw new Error(`said ${out}`)
      await new Promise((resolve) => setTimeout(resolve, 10))
    }
  }
  return { child, ended, said, output: () => out }
}

const ROUNDS = 40

/** A child process holding main's snapshot lock, and this process's history on the same state. */
async function lockHeldByAnother(t: TestContext) {
  const { stateDir, workTree } = shared(t)
  const holder = snapshotter(stateDir, workTree, 'h', 0, 'hold')
  t.after(() => holder.child.kill('SIGKILL'))
  await holder.said('locked')
  const history = await WorkspaceHistory.open({ stateDir, workTree })
  t.after(() => history.close())
  return { stateDir, workTree, holder, history }
}

describe('two processes snapshotting one main', () => {
  it('never fail on the shared index or on main’s reference, and every file is kept', async (t) => {
    const { stateDir, workTree } = shared(t)
    const children = ['p', 'q'].map((name) => snapshotter(stateDir, workTree, name, ROUNDS, 'race'))
    t.after(() => children.forEach(({ child }) => child.kill('SIGKILL')))
    for (const { said } of children) await said('ready')
    for (const { child } of children) child.stdin.end('\n')
    for (const { ended } of children) assert.equal(await ended, 0)
    for (const { output } of children) {
      const report = JSON.parse(output().split('\n').at(-2) ?? '') as { failures: string[] }
      assert.deepEqual(report.failures, [])
    }
    const history = await WorkspaceHistory.open({ stateDir, workTree })
    t.after(() => history.close())
    const last = await history.snapshotMain()
    assert.equal(await history.readRef(MAIN_REF), last.commit)
    const listed = await runGit({ gitDir: history.gitDir }, ['ls-tree', '--name-only', last.commit])
    const expected = ['a.txt']
    for (const name of ['p', 'q'])
      for (let round = 0; round < ROUNDS; round++) expected.push(`${name}-${round}.txt`)
    assert.deepEqual(listed.stdout.toString().trim().split('\n').sort(), expected.sort())
    // One line of commits, each on top of the one before (no snapshot lost off the line).
    const line = await runGit({ gitDir: history.gitDir }, ['rev-list', '--parents', MAIN_REF])
    for (const entry of line.stdout.toString().trim().split('\n'))
      assert.ok(entry.split(' ').length <= 2, `a commit with one parent at most: ${entry}`)
    assert.equal(fs.existsSync(mainSnapshotLockFile(history.gitDir)), false)
    assert.equal(fs.existsSync(path.join(stateDir, 'main.index.lock')), false)
  })

  it('a process killed holding the snapshot lock does not block later snapshots', async (t) => {
    const { workTree, holder, history } = await lockHeldByAnother(t)
    assert.ok(fs.existsSync(mainSnapshotLockFile(history.gitDir)))
    holder.child.kill('SIGKILL')
    assert.equal(await holder.ended, 'SIGKILL')
    assert.ok(fs.existsSync(mainSnapshotLockFile(history.gitDir)), 'the dead holder left its lock')
    fs.writeFileSync(path.join(workTree, 'b.txt'), 'b\n')
    const snapshot = await history.snapshotMain()
    assert.equal(await history.readRef(MAIN_REF), snapshot.commit)
    const listed = await runGit({ gitDir: history.gitDir }, [
      'ls-tree',
      '--name-only',
      snapshot.commit,
    ])
    assert.deepEqual(listed.stdout.toString().trim().split('\n'), ['a.txt', 'b.txt'])
    assert.equal(fs.existsSync(mainSnapshotLockFile(history.gitDir)), false)
    assert.deepEqual(fs.readdirSync(path.join(history.gitDir, 'eitri-ref-locks')), [])
  })

  it("a holder killed with its git drops git's index lock at the takeover, unless a process holds it open", async (t) => {
    const { stateDir, holder, history } = await lockHeldByAnother(t)
    // As a kill -9 of the holder's whole group leaves it: git's lock on main's index.
    const indexLock = path.join(stateDir, 'main.index.lock')
    assert.equal(path.dirname(history.gitDir), stateDir)
    fs.writeFileSync(indexLock, '')
    // The control first: a process that has it open (a git still running) keeps it.
    const descriptor = fs.openSync(indexLock, 'r')
    const keeper = spawn('sleep', ['30'], { stdio: ['ignore', descriptor, 'ignore'] })
    fs.closeSync(descriptor)
    t.after(() => keeper.kill('SIGKILL'))
    holder.child.kill('SIGKILL')
    assert.equal(await holder.ended, 'SIGKILL')
    await assert.rejects(history.snapshotMain(), /main\.index\.lock/)
    assert.ok(fs.existsSync(indexLock), 'kept while a process has it open')
    keeper.kill('SIGKILL')
    await new Promise((resolve) => keeper.once('exit', resolve))
    // Now nothing has it open; the next takeover of a killed holder's lock drops it.
    const second = snapshotter(stateDir, path.dirname(stateDir) + '/work', 'h2', 0, 'hold')
    t.after(() => second.child.kill('SIGKILL'))
    await second.said('locked')
    second.child.kill('SIGKILL')
    assert.equal(await second.ended, 'SIGKILL')
    fs.writeFileSync(path.join(path.dirname(stateDir), 'work', 'c.txt'), 'c\n')
    const snapshot = await history.snapshotMain()
    assert.equal(await history.readRef(MAIN_REF), snapshot.commit)
    assert.equal(fs.existsSync(indexLock), false)
  })

  it('a live holder is waited for, and the snapshot follows once it lets go', async (t) => {
    const { holder, history } = await lockHeldByAnother(t)
    const snapshot = history.snapshotMain()
    // Some git commands' worth later the holder, still holding the lock, writes a file: the
    // snapshot holds it only if it waited for the lock.
    for (let count = 0; count < 3; count++)
      await runGit({ gitDir: history.gitDir }, ['count-objects'])
    holder.child.stdin.end('\n')
    const taken = await snapshot
    assert.equal(await holder.ended, 0)
    assert.equal(await history.readRef(MAIN_REF), taken.commit)
    const listed = await runGit({ gitDir: history.gitDir }, [
      'ls-tree',
      '--name-only',
      taken.commit,
    ])
    assert.deepEqual(listed.stdout.toString().trim().split('\n'), ['a.txt', 'held.txt'])
  })
})
