import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { describe, it } from 'node:test'
import { EitriError } from '../errors/eitri-error.ts'
import { BlobDrive } from './blob-drive.ts'
import { DirectoryTree } from './directory-tree.ts'
import { ForkTree } from './fork-tree.ts'
import { linesFixture } from './test-lines.ts'
import { WorkspaceLines } from './workspace-lines.ts'

/** Asserts `promise` rejects with `state_corrupt` and answers the message. */
async function corrupt(promise: Promise<unknown>): Promise<string> {
  const error = await promise.then(
    () => assert.fail('expected state_corrupt'),
    (caught: unknown) => caught,
  )
  assert.ok(EitriError.isInstance(error), String(error))
  assert.equal(error.code, 'state_corrupt', error.message)
  return error.message
}

describe('state files read back', () => {
  it('the fork write log: a torn last line is dropped, a bad line is named, a climbing path refused', async (t) => {
    const { lines, stateDir } = await linesFixture(t)
    const fork = await lines.fork({ name: 'logged' })
    const tree = await lines.tree('logged')
    await tree.writeFileAtomic('a.txt', Buffer.from('one'))
    await tree.writeFileAtomic('b.txt', Buffer.from('two'))
    const log = path.join(stateDir, 'forks', fork.id, 'writes.jsonl')
    const good = fs.readFileSync(log, 'utf8')
    const [first, second] = good.trimEnd().split('\n') as [string, string]
    const baseTree = await lines.history.treeOf(fork.forkPoint)
    const reopen = () =>
      Promise.resolve().then(
        () => new ForkTree({ store: lines.history.store, baseTree, logFile: log }),
      )

    // Cut short by a crash: the writes before it stay, and the next write seals it.
    fs.writeFileSync(log, `${first}\n${second.slice(0, 20)}`)
    const torn = await reopen()
    assert.deepEqual(torn.changedPaths(), ['a.txt'])
    await torn.writeFileAtomic('c.txt', Buffer.from('three'))
    assert.deepEqual((await reopen()).changedPaths(), ['a.txt', 'c.txt'])

    // The control: the same cut line in the middle, unsealed, is corruption.
    fs.writeFileSync(log, `${first}\n${second.slice(0, 20)}\n${second}\n`)
    assert.equal(
      await corrupt(reopen()),
      `The fork write log ${log} line 2 is not a valid record (not JSON). The fork's writes since its last commit cannot be read back: repair or remove that line, or throw the fork away with \`eitri discard\`.`,
    )
    fs.writeFileSync(log, `${first}\n${second.replace('"b.txt"', '"../../outside.txt"')}\n`)
    assert.match(await corrupt(reopen()), /line 2 is not a valid record \(path: a relative path/)
  })

  it('the drive catalog: a torn last line is dropped, a bad or climbing line refuses to open', async (t) => {
    const { lines, stateDir } = await linesFixture(t)
    const drive = new BlobDrive(lines.history, stateDir)
    await drive.write('a.txt', Buffer.from('one'))
    await drive.write('b.txt', Buffer.from('two'))
    const catalog = path.join(stateDir, 'drive-catalog.jsonl')
    const [first, second] = fs.readFileSync(catalog, 'utf8').trimEnd().split('\n') as [
      string,
      string,
    ]
    const reopen = () => Promise.resolve().then(() => new BlobDrive(lines.history, stateDir))

    fs.writeFileSync(catalog, `${first}\n${second.slice(0, 30)}`)
    const torn = await reopen()
    assert.deepEqual(
      (await torn.list('')).map((entry) => entry.name),
      ['a.txt'],
    )
    await torn.write('c.txt', Buffer.from('three'))
    assert.deepEqual(
      (await (await reopen()).list('')).map((entry) => entry.name),
      ['a.txt', 'c.txt'],
    )

    fs.writeFileSync(catalog, `${first}\n{"op":"write"}\n`)
    assert.match(await corrupt(reopen()), /^The drive catalog .* line 2 is not a valid record/)
    const materialized = path.join(stateDir, 'drive-copy', 'inner')
    fs.writeFileSync(catalog, `${first.replace('"a.txt"', '"../../escaped.txt"')}\n`)
    assert.match(await corrupt(reopen()), /line 1 is not a valid record \(path: /)
    assert.equal(fs.existsSync(path.join(materialized, '..', '..', 'escaped.txt')), false)
  })

  it('the merge journal: a valid one is finished at open; a corrupt or climbing one is refused, naming the file', async (t) => {
    const { lines, workspace, stateDir, base } = await linesFixture(t, { 'kept.txt': 'kept\n' })
    const oid = lines.history.store.write('blob', Buffer.from('merged\n'))
    const previous = (await lines.log('main'))[0]?.commit ?? ''
    await lines.close()
    const journalFile = path.join(stateDir, 'merge-journal.json')
    const journal = (entryPath: string) =>
      JSON.stringify({
        id: 'j1',
        kind: 'undo',
        commit: '',
        previous,
        entries: [{ path: entryPath, after: { oid, kind: 'file' } }],
      })
    const open = () => WorkspaceLines.open({ main: new DirectoryTree(workspace), stateDir })

    fs.writeFileSync(journalFile, journal('../escaped.txt'))
    const message = await corrupt(open())
    assert.match(
      message,
      /^The merge journal .*merge-journal\.json is not valid \(entries\.0\.path: /,
    )
    assert.match(message, /move the file aside/)
    assert.equal(fs.existsSync(path.join(base, 'escaped.txt')), false, 'nothing left the folder')

    fs.writeFileSync(journalFile, '{"id":"j1","kind":"undo","entries":[')
    assert.match(await corrupt(open()), /merge-journal\.json is not valid \(not JSON\)/)

    // The control: the same journal with a path inside is finished.
    fs.writeFileSync(journalFile, journal('merged.txt'))
    const reopened = await open()
    t.after(() => reopened.close())
    assert.equal(fs.readFileSync(path.join(workspace, 'merged.txt'), 'utf8'), 'merged\n')
    assert.equal(fs.existsSync(journalFile), false)

    fs.writeFileSync(path.join(stateDir, 'last-merge.json'), '{"id":')
    assert.match(
      await corrupt(reopened.undoMerge()),
      /^The record of the last merge .*last-merge\.json is not valid \(not JSON\)\. The last merge cannot be undone/,
    )
  })
})
