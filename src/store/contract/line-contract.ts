/**
 * @module store/contract/line-contract
 * The contract of workspace lines: tasks and knowledge follow forks, merges and discards.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { freshStore, type StoreHarness } from './store-harness.ts'
import { rejectsWith } from './task-contract.ts'

/** Registers the line contract. */
export function lineContract(harness: StoreHarness): void {
  void describe('lines', () => {
    void it('a fork sees its parent as of the fork, plus its own changes, and nothing else', async () => {
      await using store = (await freshStore(harness)).store
      const main = store.tasks('main')
      const before = await main.create({ title: 'before the fork' })
      await store.knowledge('main').add({ title: 'Shared', body: 'written on main [[Old]]' })
      const fork = await store.forkLine('main', 'run-1')
      assert.equal(fork.parent, 'main')
      assert.equal(fork.state, 'open')
      const after = await main.create({ title: 'after the fork, on main' })
      await main.update(before.id, { status: 'completed' })
      const inFork = store.tasks('run-1')
      const own = await inFork.create({ title: 'in the fork' })
      await inFork.update(before.id, { priority: 'high' })

      assert.deepEqual(
        (await inFork.list()).map((task) => [task.title, task.status, task.priority]),
        [
          ['before the fork', 'pending', 'high'],
          ['in the fork', 'pending', 'medium'],
        ],
      )
      assert.equal(await inFork.get(after.id), undefined)
      assert.deepEqual(
        (await main.list()).map((task) => [task.title, task.status, task.priority]),
        [
          ['before the fork', 'completed', 'medium'],
          ['after the fork, on main', 'pending', 'medium'],
        ],
      )
      assert.equal(await main.get(own.id), undefined)

      await store.knowledge('run-1').add({ title: 'Fork note', body: 'zeppelins and [[Shared]]' })
      await store.knowledge('main').add({ title: 'Main note', body: 'trains and [[Shared]]' })
      assert.deepEqual(
        (await store.knowledge('run-1').search('zeppelins')).map((h) => h.title),
        ['Fork note'],
      )
      assert.deepEqual(await store.knowledge('main').search('zeppelins'), [])
      assert.deepEqual(await store.knowledge('run-1').search('trains'), [])
      assert.deepEqual((await store.knowledge('run-1').links('Shared')).back, ['Fork note'])
      assert.deepEqual((await store.knowledge('main').links('Shared')).back, ['Main note'])
      assert.deepEqual((await store.knowledge('run-1').get('Shared'))?.links, ['Old'])
    })

    void it('a merge makes the fork’s rows the parent’s and closes the fork', async () => {
      await using store = (await freshStore(harness)).store
      const task = await store.tasks('main').create({ title: 'shared task' })
      await store.forkLine('main', 'run-1')
      await store.tasks('run-1').update(task.id, { status: 'completed' })
      const created = await store.tasks('run-1').create({ title: 'new in fork' })
      await store.knowledge('run-1').add({ title: 'Finding', body: 'The parser is [[Slow]].' })
      await store.knowledge('run-1').add({ title: 'Finding', body: 'The parser is [[Fast]] now.' })

      const report = await store.mergeLine('run-1')
      assert.deepEqual(report, { line: 'run-1', into: 'main', merged: 3, conflicts: [] })
      const main = store.tasks('main')
      assert.equal((await main.get(task.id))?.status, 'completed')
      assert.deepEqual(await main.get(created.id), { ...created })
      assert.deepEqual((await store.knowledge('main').get('finding'))?.links, ['Fast'])
      assert.deepEqual((await store.knowledge('main').links('Fast')).back, ['Finding'])
      assert.deepEqual((await store.knowledge('main').links('Slow')).back, [])
      assert.deepEqual(
        (await store.knowledge('main').search('parser')).map((h) => h.title),
        ['Finding'],
      )
      assert.equal((await store.getLine('run-1'))?.state, 'merged')
      assert.match(await rejectsWith(store.tasks('run-1').list(), 'conflict'), /merged into main/)
      await rejectsWith(store.tasks('run-1').create({ title: 'late' }), 'conflict')
      await rejectsWith(store.mergeLine('run-1'), 'conflict')
    })

    void it('reports rows changed on both sides; the fork wins, or nothing merges', async () => {
      await using store = (await freshStore(harness)).store
      const task = await store.tasks('main').create({ title: 'contested' })
      await store.knowledge('main').add({ title: 'Topic', body: 'v1' })
      await store.forkLine('main', 'a')
      await store.forkLine('main', 'b')
      for (const line of ['a', 'b']) {
        await store.tasks(line).update(task.id, { title: `from ${line}` })
        await store.knowledge(line).add({ title: 'Topic', body: `from ${line}` })
      }
      await store.tasks('main').update(task.id, { priority: 'low' })
      await store.knowledge('main').add({ title: 'Topic', body: 'main v2' })
      const refused = await rejectsWith(store.mergeLine('a', { conflicts: 'refuse' }), 'conflict')
      assert.match(refused, /task t-1/)
      assert.equal((await store.tasks('main').get(task.id))?.title, 'contested')
      assert.equal((await store.getLine('a'))?.state, 'open')
      const report = await store.mergeLine('a')
      assert.deepEqual(report.conflicts, [
        { kind: 'task', key: task.id },
        { kind: 'knowledge', key: 'Topic' },
      ])
      assert.equal((await store.tasks('main').get(task.id))?.title, 'from a')
      // b forked before a merged, so main's changes since then, a's included, conflict with it.
      const second = await store.mergeLine('b')
      assert.equal(second.conflicts.length, 2)
      assert.equal((await store.knowledge('main').get('topic'))?.body, 'from b')
    })

    void it('a discard drops the fork’s rows and its own forks, and leaves the parent alone', async () => {
      await using store = (await freshStore(harness)).store
      await store.tasks('main').create({ title: 'kept' })
      await store.forkLine('main', 'run-1')
      await store.tasks('run-1').create({ title: 'dropped' })
      await store.knowledge('run-1').add({ title: 'Dropped', body: 'zeppelins' })
      await store.forkLine('run-1', 'run-1/child')
      await store.tasks('run-1/child').create({ title: 'dropped too' })
      const closed = await store.discardLine('run-1')
      assert.deepEqual(
        closed.map((line) => [line.name, line.state, line.parent]),
        [
          ['run-1', 'discarded', 'main'],
          ['run-1/child', 'discarded', 'run-1'],
        ],
      )
      assert.deepEqual(
        (await store.tasks('main').list()).map((task) => task.title),
        ['kept'],
      )
      assert.deepEqual(await store.knowledge('main').search('zeppelins'), [])
      await rejectsWith(store.tasks('run-1/child').list(), 'conflict')
      await rejectsWith(store.discardLine('run-1'), 'conflict')
    })

    void it('nested forks see each ancestor as of their own fork, and merge upward', async () => {
      await using store = (await freshStore(harness)).store
      await store.tasks('main').create({ title: 'm1' })
      await store.forkLine('main', 'p')
      await store.tasks('main').create({ title: 'm2' })
      await store.tasks('p').create({ title: 'p1' })
      await store.forkLine('p', 'c')
      await store.tasks('p').create({ title: 'p2' })
      await store.tasks('c').create({ title: 'c1' })
      const titles = async (line: string) => (await store.tasks(line).list()).map((t) => t.title)
      assert.deepEqual(await titles('c'), ['m1', 'p1', 'c1'])
      await rejectsWith(store.mergeLine('p'), 'conflict')
      await store.mergeLine('c')
      assert.deepEqual(await titles('p'), ['m1', 'p1', 'p2', 'c1'])
      await store.mergeLine('p')
      assert.deepEqual(await titles('main'), ['m1', 'm2', 'p1', 'p2', 'c1'])
    })

    void it('refuses bad names, reused names, unknown and closed lines, and discarding main', async () => {
      await using store = (await freshStore(harness)).store
      await rejectsWith(store.forkLine('main', '../etc'), 'invalid_input')
      await rejectsWith(store.forkLine('nowhere', 'x'), 'not_found')
      await rejectsWith(store.tasks('nowhere').list(), 'not_found')
      await store.forkLine('main', 'x')
      await rejectsWith(store.forkLine('main', 'x'), 'conflict')
      await rejectsWith(store.discardLine('main'), 'conflict')
      await rejectsWith(store.mergeLine('main'), 'conflict')
      await store.discardLine('x')
      await rejectsWith(store.forkLine('x', 'y'), 'conflict')
      await rejectsWith(store.forkLine('main', 'x'), 'conflict')
      assert.deepEqual(
        (await store.listLines()).map((line) => [line.name, line.state]),
        [
          ['main', 'open'],
          ['x', 'discarded'],
        ],
      )
    })
  })
}
