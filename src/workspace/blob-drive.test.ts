import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { BlobDrive, DRIVE_REF } from './blob-drive.ts'
import { linesFixture } from './test-lines.ts'

const bytes = (text: string) => Buffer.from(text)
const text = (data: Uint8Array) => Buffer.from(data).toString('utf8')

describe('BlobDrive', () => {
  it('gives the same bytes the same sha256 id, whatever their name', async (t) => {
    const { lines, stateDir } = await linesFixture(t)
    const drive = new BlobDrive(lines.history, stateDir)
    const first = await drive.write('a.txt', bytes('same'))
    const second = await drive.write('folder/b.txt', bytes('same'))
    assert.equal(first.id, second.id)
    assert.equal(
      first.id,
      'sha256:0967115f2813a3541eaef77de9d9d5773f1c0c04314b0bbfe4ff3b3b1c55b5d5',
    )
    assert.equal(text(await drive.get(first.id)), 'same')
  })

  it('keeps the old version when a name is written again', async (t) => {
    const { lines, stateDir } = await linesFixture(t)
    const drive = new BlobDrive(lines.history, stateDir)
    const v1 = await drive.write('report.md', bytes('v1'))
    await drive.write('report.md', bytes('v2'))
    assert.equal(text(await drive.read('report.md')), 'v2')
    assert.equal(text(await drive.read('report.md', { version: v1.id })), 'v1')
    assert.deepEqual(
      (await drive.versions('report.md')).map((version) => version.size),
      [2, 2],
    )
    await drive.remove('report.md')
    assert.equal(await drive.stat('report.md'), undefined)
    assert.equal(text(await drive.get(v1.id)), 'v1', 'removed names keep their contents by id')
  })

  it('lists folders first, then files, each by name', async (t) => {
    const { lines, stateDir } = await linesFixture(t)
    const drive = new BlobDrive(lines.history, stateDir)
    await drive.write('b.txt', bytes('b'))
    await drive.write('a.txt', bytes('a'))
    await drive.write('zeta/x.txt', bytes('x'))
    await drive.makeFolder('alpha')
    assert.deepEqual(
      (await drive.list('')).map((entry) => `${entry.type}:${entry.name}`),
      ['folder:alpha', 'folder:zeta', 'file:a.txt', 'file:b.txt'],
    )
  })

  it('refuses to remove a folder that is not empty, and removes an empty one', async (t) => {
    const { lines, stateDir } = await linesFixture(t)
    const drive = new BlobDrive(lines.history, stateDir)
    await drive.write('full/x.txt', bytes('x'))
    await drive.makeFolder('empty')
    await assert.rejects(drive.remove('full'), /not empty/)
    assert.equal((await drive.stat('full/x.txt'))?.path, 'full/x.txt')
    await drive.remove('empty')
    assert.equal(await drive.stat('empty'), undefined)
  })

  it('refuses paths that climb or are empty', async (t) => {
    const { lines, stateDir } = await linesFixture(t)
    const drive = new BlobDrive(lines.history, stateDir)
    for (const bad of ['', '../x', 'a/../../b', 'a//b', './x'])
      await assert.rejects(drive.write(bad, bytes('x')), /not a drive path/, bad)
  })

  it('survives a reopen and keeps its history in git', async (t) => {
    const { lines, stateDir } = await linesFixture(t)
    const drive = new BlobDrive(lines.history, stateDir)
    const v1 = await drive.write('keep.txt', bytes('v1'))
    await drive.write('keep.txt', bytes('v2'))
    const reopened = new BlobDrive(lines.history, stateDir)
    assert.equal(text(await reopened.read('keep.txt')), 'v2')
    assert.equal(text(await reopened.read('keep.txt', { version: v1.id })), 'v1')
    const { execFileSync } = await import('node:child_process')
    const log = execFileSync(
      'git',
      ['--git-dir', lines.history.gitDir, 'log', '--format=%s', DRIVE_REF],
      { encoding: 'utf8' },
    )
    assert.equal(log, 'write keep.txt\nwrite keep.txt\n')
  })
})
