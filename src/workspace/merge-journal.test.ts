import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import { statSync } from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { describe, it, type TestContext } from 'node:test'
import { DirectoryTree } from './directory-tree.ts'
import { MAIN_REF, WorkspaceHistory } from './history.ts'
import { recoverJournal, runJournal, type JournalContext } from './journal-runner.ts'
import {
  applyEntries,
  changedSince,
  journalEntryOf,
  readMergeJournal,
  removeStaleTemporaries,
  writeDurably,
  type MergeJournal,
} from './merge-journal.ts'
import { diffTrees } from './tree-merge.ts'

/** A live folder holding `files`, its history, and the journal's context over both. */
async function fixture(t: TestContext, files: Record<string, string>) {
  const base = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'eitri-journal-')))
  const workspace = path.join(base, 'workspace')
  const stateDir = path.join(base, 'state')
  await fs.mkdir(workspace)
  await put(workspace, files)
  const history = await WorkspaceHistory.open({ stateDir, workTree: workspace })
  t.after(async () => {
    history.close()
    await fs.rm(base, { recursive: true, force: true })
  })
  const main = new DirectoryTree(workspace)
  const touched: string[] = []
  const context: JournalContext = {
    stateDir,
    main,
    history,
    touch: (relative) => touched.push(relative),
    snapshotMain: (message, paths) => history.snapshotMain({ message, paths }),
    gitTouched: () => undefined,
  }
  const live = (name: string) =>
    fs.readFile(path.join(workspace, name), 'utf8').catch(() => undefined)
  return { workspace, stateDir, history, main, context, touched, live }
}

async function put(root: string, files: Record<string, string>): Promise<void> {
  for (const [name, content] of Object.entries(files)) {
    await fs.mkdir(path.dirname(path.join(root, name)), { recursive: true })
    await fs.writeFile(path.join(root, name), content)
  }
}

/**
 * A merge journal from main as it is (`before`) to main with `change` made: both states are
 * snapshotted for real, then the folder is put back as before, as a merge would find it.
 */
async function plannedMerge(
  f: Awaited<ReturnType<typeof fixture>>,
  change: (workspace: string) => Promise<void>,
): Promise<MergeJournal> {
  const before = await f.history.snapshotMain()
  const saved = path.join(path.dirname(f.workspace), 'saved')
  await fs.cp(f.workspace, saved, { recursive: true })
  await change(f.workspace)
  const after = await f.history.snapshotMain()
  await fs.rm(f.workspace, { recursive: true })
  await fs.rename(saved, f.workspace)
  await f.history.updateRef(MAIN_REF, before.commit, after.commit)
  const entries = (await diffTrees(f.history.gitDir, before.commit, after.commit)).map(
    journalEntryOf,
  )
  return { id: 'test', kind: 'merge', commit: after.commit, previous: before.commit, entries }
}

describe('applying a journal to the live folder', () => {
  it('writes files, executables and links, removes files and the folders they leave empty; a replay changes nothing more', async (t) => {
    const f = await fixture(t, { 'keep.txt': 'keep\n', 'old/gone.txt': 'gone\n', 'a.txt': 'a\n' })
    const journal = await plannedMerge(f, async (workspace) => {
      await fs.writeFile(path.join(workspace, 'a.txt'), 'merged\n')
      await put(workspace, { 'new/deep/b.txt': 'b\n', 'run.sh': '#!/bin/sh\n' })
      await fs.chmod(path.join(workspace, 'run.sh'), 0o755)
      await fs.symlink('a.txt', path.join(workspace, 'link'))
      await fs.rm(path.join(workspace, 'old'), { recursive: true })
    })
    assert.deepEqual(journal.entries.map((entry) => entry.path).sort(), [
      'a.txt',
      'link',
      'new/deep/b.txt',
      'old/gone.txt',
      'run.sh',
    ])
    for (let round = 0; round < 2; round++) {
      await applyEntries(f.main, f.history.store, journal.entries)
      assert.equal(await f.live('a.txt'), 'merged\n')
      assert.equal(await f.live('new/deep/b.txt'), 'b\n')
      assert.equal(await f.live('keep.txt'), 'keep\n')
      assert.equal(await fs.readlink(path.join(f.workspace, 'link')), 'a.txt')
      assert.equal(statSync(path.join(f.workspace, 'run.sh')).mode & 0o777, 0o755)
      assert.equal(statSync(path.join(f.workspace, 'a.txt')).mode & 0o777, 0o644)
      await assert.rejects(fs.stat(path.join(f.workspace, 'old')), { code: 'ENOENT' })
    }
    assert.equal((await f.history.snapshotMain()).tree, await f.history.treeOf(journal.commit))
  })

  it('refuses an entry the folder cannot hold, naming its path', async (t) => {
    const f = await fixture(t, {})
    await assert.rejects(
      applyEntries(f.main, f.history.store, [
        { path: 'sub', after: { oid: 'a'.repeat(40), kind: 'gitlink' } },
      ]),
      { code: 'tool_failed', message: /Cannot merge sub: a gitlink entry/ },
    )
  })

  it('names the paths changed on disk since the plan, and none when nothing changed', async (t) => {
    const f = await fixture(t, { 'a.txt': 'a\n', 'b.txt': 'b\n' })
    const journal = await plannedMerge(f, async (workspace) => {
      await fs.writeFile(path.join(workspace, 'a.txt'), 'A\n')
      await fs.writeFile(path.join(workspace, 'b.txt'), 'B\n')
      await fs.writeFile(path.join(workspace, 'c.txt'), 'C\n')
    })
    assert.deepEqual(await changedSince(f.main, journal.entries), [])
    await fs.writeFile(path.join(f.workspace, 'b.txt'), 'edited meanwhile\n')
    await fs.writeFile(path.join(f.workspace, 'c.txt'), 'made meanwhile\n')
    assert.deepEqual(await changedSince(f.main, journal.entries), ['b.txt', 'c.txt'])
  })

  it("removes only the temporaries a killed write left beside the journal's paths", async (t) => {
    const f = await fixture(t, {
      'dir/.a.txt.eitri-0123456789ab.tmp': 'half',
      'dir/.other.txt.eitri-0123456789ab.tmp': 'not ours',
      'dir/.a.txt.eitri-short.tmp': 'not the pattern',
    })
    await removeStaleTemporaries(f.main, [{ path: 'dir/a.txt' }, { path: 'missing/x.txt' }])
    assert.deepEqual((await fs.readdir(path.join(f.workspace, 'dir'))).sort(), [
      '.a.txt.eitri-short.tmp',
      '.other.txt.eitri-0123456789ab.tmp',
    ])
  })
})

describe('the journal file', () => {
  it('reads back what was written durably; nothing when there is none', async (t) => {
    const f = await fixture(t, { 'a.txt': 'a\n' })
    const file = path.join(f.stateDir, 'merge-journal.json')
    assert.equal(readMergeJournal(file, 'in-progress'), undefined)
    const journal = await plannedMerge(f, (workspace) =>
      fs.writeFile(path.join(workspace, 'a.txt'), 'b\n'),
    )
    writeDurably(file, journal)
    assert.deepEqual(readMergeJournal(file, 'in-progress'), journal)
    assert.deepEqual(
      (await fs.readdir(f.stateDir)).filter((name) => name.endsWith('.tmp')),
      [],
      'no temporary is left beside it',
    )
  })

  it('refuses a journal whose path would leave the folder, saying what to do', async (t) => {
    const f = await fixture(t, {})
    const file = path.join(f.stateDir, 'merge-journal.json')
    const entry = { path: 'inside.txt', after: { oid: 'a'.repeat(40), kind: 'file' } }
    const journal = { id: 'x', kind: 'merge', commit: '', previous: '', entries: [entry] }
    writeDurably(file, journal)
    assert.equal(readMergeJournal(file, 'in-progress')?.entries[0]?.path, 'inside.txt')
    writeDurably(file, { ...journal, entries: [{ ...entry, path: '../outside.txt' }] })
    assert.throws(() => readMergeJournal(file, 'in-progress'), {
      code: 'state_corrupt',
      message: /merge journal.*move the file aside/s,
    })
  })
})

describe('running a journal', () => {
  it('a merge cut after its first file is finished at the next open: main wholly after, the journal gone', async (t) => {
    const f = await fixture(t, { 'a.txt': 'a\n', 'b.txt': 'b\n' })
    const journal = await plannedMerge(f, async (workspace) => {
      await fs.writeFile(path.join(workspace, 'a.txt'), 'A\n')
      await fs.writeFile(path.join(workspace, 'b.txt'), 'B\n')
    })
    const crash = new Error('crash')
    await assert.rejects(
      runJournal(f.context, journal, (step) => {
        if (step === 'file-written:0') throw crash
      }),
      crash,
    )
    const file = path.join(f.stateDir, 'merge-journal.json')
    assert.deepEqual(readMergeJournal(file, 'in-progress'), journal, 'the journal stays')
    assert.deepEqual(
      [await f.live('a.txt'), await f.live('b.txt')],
      ['A\n', 'b\n'],
      'half merged at the crash',
    )
    assert.equal(await f.history.readRef(MAIN_REF), journal.previous)

    await recoverJournal(f.context)
    assert.deepEqual([await f.live('a.txt'), await f.live('b.txt')], ['A\n', 'B\n'])
    assert.equal(await f.history.readRef(MAIN_REF), journal.commit)
    assert.equal(readMergeJournal(file, 'in-progress'), undefined)
    assert.deepEqual(
      readMergeJournal(path.join(f.stateDir, 'last-merge.json'), 'last-merge'),
      journal,
      'kept for an undo',
    )
    assert.deepEqual(f.touched.sort(), ['a.txt', 'b.txt'])
    // Nothing left to recover: a second open changes nothing.
    await recoverJournal(f.context)
    assert.equal(await f.history.readRef(MAIN_REF), journal.commit)
  })

  it('runs every step in order when nothing interrupts it', async (t) => {
    const f = await fixture(t, { 'a.txt': 'a\n' })
    const journal = await plannedMerge(f, (workspace) => fs.rm(path.join(workspace, 'a.txt')))
    const steps: string[] = []
    assert.deepEqual(await runJournal(f.context, journal, (step) => steps.push(step)), [])
    assert.deepEqual(steps, ['journal-written', 'file-written:0', 'files-written', 'ref-moved'])
    assert.equal(await f.live('a.txt'), undefined)
    assert.equal(await f.history.readRef(MAIN_REF), journal.commit)
  })
})
