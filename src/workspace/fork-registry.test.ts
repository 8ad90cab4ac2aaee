import assert from 'node:assert/strict'
import fsSync from 'node:fs'
import fs from 'node:fs/promises'
import path from 'node:path'
import { describe, it } from 'node:test'
import { visibleForks } from './fork-owner.ts'
import {
  chooseForkName,
  displayName,
  findLine,
  forkLabel,
  newForkId,
  readForks,
  writeFork,
  FORK_ID,
  type ForkInfo,
} from './fork-registry.ts'
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

  it('reads a record again whenever its file changed, and hands out records nobody can change', async (t) => {
    const { lines, stateDir } = await linesFixture(t)
    const fork = await lines.fork({ name: 'kept' })
    const file = path.join(stateDir, 'forks', fork.id, 'fork.json')
    assert.equal(lines.find('kept') !== 'main', true, 'read once, and cached')
    // Another process replaces it whole (as eitri writes records)...
    writeFork(stateDir, { ...fork, name: 'renamed' })
    assert.deepEqual(
      lines.forks().map((info) => info.name),
      ['renamed'],
    )
    // ...or a person edits it in place.
    const record = JSON.parse(await fs.readFile(file, 'utf8'))
    await fs.writeFile(file, JSON.stringify({ ...record, name: 'edited' }))
    assert.deepEqual(
      lines.forks().map((info) => info.name),
      ['edited'],
    )
    await lines.discard(fork.id)
    assert.deepEqual(lines.forks(), [], 'discarded: read again, and left out')
    const [listed] = readForks(stateDir, { discarded: true })
    assert.equal(listed?.discarded?.changes, 0)
    assert.throws(() => {
      ;(listed as { name?: string }).name = 'changed'
    }, TypeError)
    assert.equal(readForks(stateDir, { discarded: true })[0]?.name, 'edited')
  })

  it('lists a discarded record without a stat, and finds an open fork by id reading only its record', async (t) => {
    const { lines, stateDir } = await linesFixture(t)
    const gone = await lines.fork({ name: 'gone' })
    const open = await lines.fork({ name: 'open' })
    const child = await lines.fork({ from: open.id, name: 'child', owner: alice.id })
    await lines.discard(gone.id)
    assert.deepEqual(
      readForks(stateDir, { discarded: true }).map((info) => info.name),
      ['gone', 'open', 'child'],
    )
    const stats: string[] = []
    const lstat = fsSync.lstatSync
    t.mock.method(fsSync, 'lstatSync', (file: string, ...rest: unknown[]) => {
      stats.push(path.basename(path.dirname(file)))
      return (lstat as (...args: unknown[]) => unknown)(file, ...rest)
    })
    assert.deepEqual(
      lines.forks().map((info) => info.name),
      ['open', 'child'],
    )
    assert.deepEqual(stats.sort(), [open.id, child.id].sort(), 'the discarded record: no stat')
    stats.length = 0
    assert.equal((lines.find(child.id, alice) as ForkInfo).name, 'child')
    assert.deepEqual(stats, [child.id], 'by id: its record alone')
    stats.length = 0
    // Visibility by id is decided up the parents: alice does not see the person's fork above.
    assert.throws(() => lines.find(open.id, alice), { code: 'not_found' })
    assert.throws(() => lines.find(gone.id), { code: 'not_found' })
    t.mock.restoreAll()
    // A record rewritten by another process is read again by id, too.
    writeFork(stateDir, { ...child, name: 'renamed' })
    assert.equal((lines.find(child.id, alice) as ForkInfo).name, 'renamed')
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

/** A fork record for the naming tables. */
function record(id: string, name?: string): ForkInfo {
  return {
    id,
    ...(name === undefined ? {} : { name }),
    owner: 'person',
    parent: 'main',
    forkPoint: 'a'.repeat(40),
    created: '2026-01-01T00:00:00.000Z',
    readOnly: false,
    quotaBytes: 1024,
  }
}

describe('naming and finding forks', () => {
  const named = record('f-00000001', 'draft')
  const unnamed = record('f-00000002')
  const twin = record('f-00000003', 'twin')
  const otherTwin = record('f-00000004', 'twin')

  it('shows a fork by its name, else by its id', () => {
    assert.equal(displayName(named), 'draft')
    assert.equal(displayName(unnamed), 'f-00000002')
  })

  it('finds main, a fork by id or by name, and names the forks there are when none matches', () => {
    const visible = [named, unnamed, twin, otherTwin]
    assert.equal(findLine(visible, 'main'), 'main')
    assert.equal(findLine(visible, 'f-00000002'), unnamed)
    assert.equal(findLine(visible, 'draft'), named)
    assert.equal(findLine(visible, 'f-00000003'), twin, 'an id reaches one of twins')
    assert.throws(() => findLine(visible, 'twin'), {
      code: 'invalid_input',
      message: /Several forks are named twin \(f-00000003, f-00000004\)/,
    })
    assert.throws(() => findLine(visible, 'nope'), {
      code: 'not_found',
      message: 'No fork named nope. Forks: draft, f-00000002, twin, twin.',
    })
    assert.throws(() => findLine([], 'draft'), { message: /Forks: \(none\)\./ })
    // A huge name is quoted by its start and length, not whole.
    assert.throws(() => findLine(visible, 'n'.repeat(1_000_000)), {
      code: 'not_found',
      message: `No fork named ${'n'.repeat(200)}… (1000000 characters in all). Forks: draft, f-00000002, twin, twin.`,
    })
  })

  it('reaches no fork left out of the visible ones, by id or by name', () => {
    assert.throws(() => findLine([unnamed], 'draft'), { code: 'not_found' })
    assert.throws(() => findLine([unnamed], 'f-00000001'), { code: 'not_found' })
  })

  it('checks a given name against the maker’s forks only, and numbers a label past the forks it sees', () => {
    assert.equal(chooseForkName({}, [], []), undefined)
    assert.equal(chooseForkName({ name: 'fresh' }, [named], [named]), 'fresh')
    for (const bad of ['main', '-x', 'a b', 'x'.repeat(65)])
      assert.throws(() => chooseForkName({ name: bad }, [], []), { code: 'invalid_input' }, bad)
    assert.throws(() => chooseForkName({ name: 'draft' }, [named], [named]), {
      code: 'invalid_input',
      message: 'A fork is already named draft; choose another name.',
    })
    assert.equal(chooseForkName({ name: 'draft' }, [], [named]), 'draft', 'another owner’s name')
    const sessions = [record('f-1', 'claude-code-1'), record('f-2', 'claude-code-2')]
    assert.equal(chooseForkName({ label: 'Claude Code' }, [], sessions), 'claude-code-3')
    assert.equal(chooseForkName({ label: 'Claude Code' }, [], []), 'claude-code-1')
    assert.equal(forkLabel('  '), 'session')
  })

  it('makes fork ids of the recorded pattern', () => {
    const ids = new Set(Array.from({ length: 20 }, newForkId))
    for (const id of ids) assert.match(id, FORK_ID)
    assert.ok(ids.size > 1)
  })
})
