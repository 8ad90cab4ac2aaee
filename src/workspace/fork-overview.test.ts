import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { describe, it } from 'node:test'
import { setTimeout as delay } from 'node:timers/promises'
import { EMPTY_FORK_IDLE_MS } from './fork-overview.ts'
import { linesFixture } from './test-lines.ts'

describe('the forks overview', () => {
  it('gives each fork its state, its changes and its last activity', async (t) => {
    const { lines, stateDir } = await linesFixture(t, { 'a.txt': 'a\n' })
    await lines.fork({ name: 'open' })
    await lines.fork({ name: 'merged' })
    const dropped = await lines.fork({ name: 'dropped' })
    const empty = await lines.fork({ name: 'empty' })
    await delay(1100) // commit times count whole seconds
    const before = Date.now()
    await (await lines.tree('open')).writeFileAtomic('b.txt', Buffer.from('b\n'))
    await (await lines.tree('open')).writeFileAtomic('a.txt', Buffer.from('A\n'))
    await (await lines.tree('merged')).writeFileAtomic('m.txt', Buffer.from('m\n'))
    await (await lines.tree('dropped')).writeFileAtomic('d.txt', Buffer.from('d\n'))
    assert.equal((await lines.merge('merged')).type, 'merged')
    await lines.discard('dropped')

    const overview = await lines.overview()
    const byName = new Map(overview.map((fork) => [fork.name, fork]))
    assert.deepEqual(
      overview.map((fork) => [fork.name, fork.state, fork.changes]),
      [
        ['open', 'open', 2],
        ['merged', 'merged', 1],
        ['dropped', 'discarded', 1],
        ['empty', 'open', 0],
      ],
    )
    assert.ok(Date.parse(byName.get('open')?.lastActivity ?? '') >= before - 1000, 'its last write')
    assert.equal(byName.get('empty')?.lastActivity, empty.created, 'never touched since made')
    assert.equal(byName.get('merged')?.lastActivity, byName.get('merged')?.merged?.at)
    assert.equal(byName.get('dropped')?.lastActivity, byName.get('dropped')?.discarded?.at)
    // Listing again changes nothing: the last activity is the write, not the listing's commit.
    await delay(1100)
    const again = await lines.overview()
    assert.equal(again[0]?.lastActivity, byName.get('open')?.lastActivity)
    // A discarded fork is listed, but no door reaches it, and its files are gone.
    assert.deepEqual(
      lines.forks().map((fork) => fork.name),
      ['open', 'merged', 'empty'],
    )
    assert.throws(() => lines.find('dropped'), /No fork named dropped/)
    assert.deepEqual(fs.readdirSync(path.join(stateDir, 'forks', dropped.id)), ['fork.json'])
  })

  it('prune removes merged forks, discarded records and empty idle forks; keeps the rest', async (t) => {
    const { lines, stateDir } = await linesFixture(t, { 'a.txt': 'a\n' })
    await lines.fork({ name: 'working' })
    await (await lines.tree('working')).writeFileAtomic('w.txt', Buffer.from('w\n'))
    await lines.fork({ name: 'merged' })
    await (await lines.tree('merged')).writeFileAtomic('m.txt', Buffer.from('m\n'))
    await lines.merge('merged')
    await lines.fork({ name: 'dropped' })
    await lines.discard('dropped')
    await lines.fork({ name: 'idle' })
    await lines.fork({ name: 'parent' })
    await lines.fork({ name: 'child', from: 'parent' })
    await (await lines.tree('child')).writeFileAtomic('c.txt', Buffer.from('c\n'))

    // Within the hour an empty fork is kept: a session may have just made it.
    assert.deepEqual(
      (await lines.pruneForks()).map((fork) => fork.name),
      ['merged', 'dropped'],
    )
    const later = Date.now() + EMPTY_FORK_IDLE_MS + 1000
    assert.deepEqual(
      (await lines.pruneForks(later)).map((fork) => fork.name),
      ['idle'],
      'an empty parent of a fork with changes stays',
    )
    assert.deepEqual(
      (await lines.overview()).map((fork) => fork.name),
      ['working', 'parent', 'child'],
    )
    assert.equal(fs.readdirSync(path.join(stateDir, 'forks')).length, 3)
  })
})
