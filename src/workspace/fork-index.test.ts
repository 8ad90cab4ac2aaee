import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import fs from 'node:fs/promises'
import path from 'node:path'
import { setTimeout as delay } from 'node:timers/promises'
import { after, before, describe, it } from 'node:test'
import { forkChangeLog, forkLinesReplayed, forkListings, forkRescan } from './fork-index.ts'
import { newForkId, readForks, type ForkInfo } from './fork-registry.ts'
import { linesFixture } from './test-lines.ts'

const registry = path.join(import.meta.dirname, 'fork-registry.ts')

/** Writes a fork's record from another process, as another eitri sharing the state folder. */
function writeFromAnotherProcess(stateDir: string, info: ForkInfo): void {
  execFileSync(process.execPath, [
    '--disable-warning=ExperimentalWarning',
    '--input-type=module',
    '-e',
    `import { writeFork } from ${JSON.stringify(registry)}; writeFork(${JSON.stringify(stateDir)}, ${JSON.stringify(info)})`,
  ])
}

describe('the index of forks', () => {
  // Full listings only when a test asks for them, however slow this machine is today.
  const { afterMs } = forkRescan
  before(() => {
    forkRescan.afterMs = 600_000
  })
  after(() => {
    forkRescan.afterMs = afterMs
  })

  it('forks, finds and discards with no listing of every fork, however many are open', async (t) => {
    const { lines } = await linesFixture(t)
    for (let index = 0; index < 30; index += 1) await lines.fork({ name: `open-${index}` })
    assert.equal(lines.forks().length, 30)
    const before = forkListings()
    const world = await lines.fork({ name: 'world' })
    await lines.fork({ from: world.id, name: 'child' })
    assert.deepEqual(
      lines.forksBelow(world.id).map((fork) => fork.name),
      ['child', 'world'],
      'each before the fork it came from',
    )
    await assert.rejects(lines.discard(world.id), { message: /has forks of its own \(child\)/ })
    await assert.rejects(lines.fork({ name: 'world' }), { message: /already named world/ })
    for (const fork of lines.forksBelow(world.id)) await lines.discard(fork.id)
    assert.deepEqual(lines.forksBelow(world.id), [])
    const again = await lines.fork({ name: 'world' })
    assert.equal(again.name, 'world', 'a discarded fork’s name is free again')
    assert.equal(forkListings() - before, 0, 'no listing: a few records read by id and parent')
  })

  it('knows at once a fork another process made or discarded, from its line in the change log', async (t) => {
    const { lines, stateDir } = await linesFixture(t)
    const parent = await lines.fork({ name: 'parent' })
    assert.deepEqual(lines.forksBelow(parent.id), [parent])
    const before = forkListings()
    const child: ForkInfo = {
      ...parent,
      id: newForkId(),
      name: 'theirs',
      parent: parent.id,
      created: new Date().toISOString(),
    }
    writeFromAnotherProcess(stateDir, child)
    assert.match(await fs.readFile(forkChangeLog(stateDir), 'utf8'), new RegExp(`${child.id}\n$`))
    await assert.rejects(lines.discard(parent.id), { message: /has forks of its own \(theirs\)/ })
    await assert.rejects(lines.fork({ name: 'theirs' }), { message: /already named theirs/ })
    writeFromAnotherProcess(stateDir, {
      ...child,
      discarded: { at: new Date().toISOString(), changes: 0 },
    })
    assert.deepEqual(lines.forksBelow(parent.id), [parent], 'their discard is seen too')
    assert.equal(forkListings() - before, 0, 'learnt from the change log, not a listing')
    await lines.discard(parent.id)
  })

  it('reads no record again for its own lines, and reads another process’s', async (t) => {
    const { lines, stateDir } = await linesFixture(t)
    const parent = await lines.fork({ name: 'parent' })
    lines.forksBelow(parent.id)
    const replayed = forkLinesReplayed()
    for (let index = 0; index < 5; index += 1) {
      const child = await lines.fork({ from: parent.id, name: `mine-${index}` })
      assert.equal(lines.forksBelow(parent.id).length, 2)
      await lines.discard(child.id)
    }
    assert.deepEqual(lines.forksBelow(parent.id), [parent])
    assert.equal(forkLinesReplayed() - replayed, 0, 'its own ten lines: no record read again')
    const theirs: ForkInfo = {
      ...parent,
      id: newForkId(),
      name: 'theirs',
      parent: parent.id,
      created: new Date().toISOString(),
    }
    writeFromAnotherProcess(stateDir, theirs)
    assert.deepEqual(
      lines.forksBelow(parent.id).map((fork) => fork.name),
      ['theirs', 'parent'],
    )
    assert.equal(forkLinesReplayed() - replayed, 1, 'the other process’s line: its record read')
  })

  it('reads a record again when another process wrote it after this one, lines unreplayed', async (t) => {
    const { lines, stateDir } = await linesFixture(t)
    const parent = await lines.fork({ name: 'parent' })
    lines.forksBelow(parent.id)
    const replayed = forkLinesReplayed()
    // This process's line for the child, then another process's for the same fork (its discard).
    const child = await lines.fork({ from: parent.id, name: 'shared' })
    writeFromAnotherProcess(stateDir, {
      ...child,
      discarded: { at: new Date().toISOString(), changes: 0 },
    })
    const log = (await fs.readFile(forkChangeLog(stateDir), 'utf8')).split('\n')
    assert.deepEqual(log.slice(-3), [child.id, child.id, ''], 'two lines for it, unreplayed')
    assert.deepEqual(lines.forksBelow(parent.id), [parent], 'their discard is seen')
    assert.equal(forkLinesReplayed() - replayed, 1, 'one line skipped as its own, one read')
  })

  it('finds a record no line announced (written by hand) at the next full listing', async (t) => {
    const { lines, stateDir } = await linesFixture(t)
    const parent = await lines.fork({ name: 'parent' })
    assert.deepEqual(lines.forksBelow(parent.id), [parent])
    const id = newForkId()
    await fs.mkdir(path.join(stateDir, 'forks', id))
    await fs.writeFile(
      path.join(stateDir, 'forks', id, 'fork.json'),
      JSON.stringify({
        ...parent,
        id,
        name: 'by-hand',
        parent: parent.id,
        created: new Date(Date.parse(parent.created) + 1).toISOString(),
      }),
    )
    assert.deepEqual(lines.forksBelow(parent.id), [parent], 'no line: not known yet')
    const listings = forkListings()
    forkRescan.afterMs = 100
    t.after(() => {
      forkRescan.afterMs = 600_000
    })
    await delay(150)
    await assert.rejects(lines.discard(parent.id), { message: /has forks of its own \(by-hand\)/ })
    assert.equal(forkListings() - listings, 1, 'one listing, once the last is old enough')
    assert.deepEqual(
      readForks(stateDir).map((fork) => fork.name),
      ['parent', 'by-hand'],
    )
  })

  it('lists again when the change log starts over or goes', async (t) => {
    const { lines, stateDir } = await linesFixture(t)
    const parent = await lines.fork({ name: 'parent' })
    lines.forksBelow(parent.id)
    const before = forkListings()
    await fs.rm(forkChangeLog(stateDir))
    assert.deepEqual(lines.forksBelow(parent.id), [parent])
    assert.equal(forkListings() - before, 1)
  })

  it('starts the change log over once it is long, at a full listing', async (t) => {
    const { lines, stateDir } = await linesFixture(t)
    const parent = await lines.fork({ name: 'parent' })
    await fs.appendFile(forkChangeLog(stateDir), `${parent.id}\n`.repeat(100_000))
    assert.deepEqual(
      readForks(stateDir).map((fork) => fork.name),
      ['parent'],
    )
    assert.equal((await fs.stat(forkChangeLog(stateDir))).size, 0)
    const child = await lines.fork({ from: parent.id, name: 'child' })
    assert.deepEqual(lines.forksBelow(parent.id), [child, parent])
  })
})
