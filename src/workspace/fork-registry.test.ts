import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { describe, it } from 'node:test'
import { visibleForks } from './fork-owner.ts'
import { linesFixture } from './test-lines.ts'

const alice = { id: 'connection-alice', seesEveryFork: false }

describe('fork records', () => {
  it('reads a record written before owners as the person’s', async (t) => {
    const { lines, stateDir } = await linesFixture(t)
    const fork = await lines.fork({ name: 'old' })
    const file = path.join(stateDir, 'forks', fork.id, 'fork.json')
    const { owner: _owner, ...before } = JSON.parse(await fs.readFile(file, 'utf8'))
    await fs.writeFile(file, JSON.stringify(before))
    const found = lines.find('old')
    assert.equal(found !== 'main' && found.owner, 'person')
    assert.throws(() => lines.find('old', alice), { code: 'not_found' })
  })

  it('names a damaged or oversized record and says how to go on', async (t) => {
    const { lines, stateDir } = await linesFixture(t)
    const fork = await lines.fork({ name: 'x' })
    const file = path.join(stateDir, 'forks', fork.id, 'fork.json')
    const record = JSON.parse(await fs.readFile(file, 'utf8'))
    for (const damaged of [
      '{"id": ',
      JSON.stringify({ ...record, owner: 7 }),
      JSON.stringify({ ...record, id: 'f-ffffffff' }),
      JSON.stringify({ ...record, name: 'x'.repeat(70_000) }),
    ]) {
      await fs.writeFile(file, damaged)
      assert.throws(
        () => lines.forks(),
        (error: Error & { code?: string }) =>
          error.code === 'state_corrupt' &&
          error.message.includes(file) &&
          /move that fork/.test(error.message),
        damaged.slice(0, 40),
      )
    }
    await fs.writeFile(file, JSON.stringify(record))
    assert.equal(lines.forks().length, 1, 'the restored record reads again')
    await fs.rm(file)
    assert.equal(lines.forks().length, 0, 'a folder without a record is skipped')
  })
})

describe('visibleForks', () => {
  const forks = [
    { id: 'f-1', owner: 'connection-alice', parent: 'main' },
    { id: 'f-2', owner: 'run-1', parent: 'f-1' },
    { id: 'f-3', owner: 'run-2', parent: 'f-2' },
    { id: 'f-4', owner: 'connection-bob', parent: 'main' },
    { id: 'f-5', owner: 'connection-alice', parent: 'f-4' },
    { id: 'f-6', owner: 'x', parent: 'f-7' },
    { id: 'f-7', owner: 'y', parent: 'f-6' },
  ]

  it('gives a principal its own forks and everything below them', () => {
    assert.deepEqual(
      visibleForks(forks, alice).map((fork) => fork.id),
      ['f-1', 'f-2', 'f-3', 'f-5'],
    )
    assert.deepEqual(
      visibleForks(forks, { id: 'connection-bob', seesEveryFork: false }).map((fork) => fork.id),
      ['f-4', 'f-5'],
    )
  })

  it('gives the person every fork, and ends on a cycle a damaged record could make', () => {
    assert.equal(visibleForks(forks, { id: 'person', seesEveryFork: true }).length, forks.length)
    assert.deepEqual(visibleForks(forks, { id: 'z', seesEveryFork: false }), [])
  })
})
