import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { describe, it } from 'node:test'
import { linesFixture } from './test-lines.ts'

const call = (detail: string) => ({ tool: 'shell', detail, session: 's-test' })

describe('snapshots of main', () => {
  it('records one snapshot before and one after each call, reusing trees when nothing changed', async (t) => {
    const { lines, workspace } = await linesFixture(t, { 'a.txt': 'v1\n' })
    await lines.snapshots.around(call('echo v2 > a.txt'), () =>
      fs.writeFile(path.join(workspace, 'a.txt'), 'v2\n'),
    )
    await lines.snapshots.around(call('true'), async () => undefined)
    const records = await lines.snapshots.list()
    assert.deepEqual(
      records.map((record) => [record.id, record.kind, record.call?.detail]),
      [
        [4, 'after', 'true'],
        [3, 'before', 'true'],
        [2, 'after', 'echo v2 > a.txt'],
        [1, 'before', 'echo v2 > a.txt'],
      ],
    )
    const trees = await Promise.all(records.map((record) => lines.snapshots.log.treeOf(record)))
    assert.equal(trees[0], trees[1], 'nothing changed: the same content tree')
    assert.equal(trees[1], trees[2])
    assert.notEqual(trees[2], trees[3])
    assert.equal(records[3]?.inFlight, 1)
    assert.equal(records[2]?.inFlight, 0)
  })

  it('restores files a call deleted, only the paths named when given, and is refused for a person’s change unless forced', async (t) => {
    const { lines, workspace, live } = await linesFixture(t, {
      'src/a.ts': 'a\n',
      'src/b.ts': 'b\n',
      'notes.md': 'n1\n',
    })
    await lines.snapshots.around(call('rm -rf src'), () =>
      fs.rm(path.join(workspace, 'src'), { recursive: true }),
    )
    const [, before] = await lines.snapshots.list()
    assert.equal(before?.kind, 'before')
    // a person edits notes.md between calls; a later call overwrites it
    await fs.writeFile(path.join(workspace, 'notes.md'), 'mine\n')
    await lines.snapshots.around(call('echo x > notes.md'), () =>
      fs.writeFile(path.join(workspace, 'notes.md'), 'agent\n'),
    )
    const only = await lines.restore(before?.id ?? 0, { paths: ['src/a.ts'] })
    assert.equal(only.type, 'restored')
    assert.equal(await live('src/a.ts'), 'a\n')
    assert.equal(await live('src/b.ts'), undefined, 'only the path named')
    const refused = await lines.restore(before?.id ?? 0)
    assert.deepEqual(refused, {
      type: 'changed-since',
      snapshot: before?.id,
      paths: ['notes.md'],
      refs: [],
    })
    assert.equal(await live('src/b.ts'), undefined, 'a refused restore changes nothing')
    const forced = await lines.restore(before?.id ?? 0, { force: true })
    assert.equal(forced.type, 'restored')
    assert.deepEqual(forced.type === 'restored' ? forced.paths : [], ['notes.md', 'src/b.ts'])
    assert.equal(await live('notes.md'), 'n1\n')
  })
})
