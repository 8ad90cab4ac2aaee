/**
 * @module store/contract/task-contract
 * The contract of `store.tasks(line)`.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { EitriError, type ErrorCode } from '../../errors/eitri-error.ts'
import { openStore } from '../open-store.ts'
import { freshStore, testDependencies, type StoreHarness } from './store-harness.ts'

/** Asserts that `promise` rejects with an EitriError of `code`; answers its message. */
export async function rejectsWith(promise: Promise<unknown>, code: ErrorCode): Promise<string> {
  try {
    await promise
  } catch (error) {
    assert.ok(EitriError.isInstance(error), `expected an EitriError, got ${String(error)}`)
    assert.equal(error.code, code, error.message)
    return error.message
  }
  assert.fail(`expected a rejection with ${code}`)
}

/** Registers the task contract. */
export function taskContract(harness: StoreHarness): void {
  void describe('tasks', () => {
    void it('creates tasks with defaults and lists them in creation order', async () => {
      await using opened = await freshStore(harness).then(({ store }) => store)
      const tasks = opened.tasks('main')
      const first = await tasks.create({ title: '  Write the README  ' })
      assert.deepEqual(first, {
        id: 't-1',
        title: 'Write the README',
        description: '',
        priority: 'medium',
        status: 'pending',
        createdAt: first.createdAt,
        updatedAt: first.createdAt,
        completedAt: null,
      })
      assert.match(first.createdAt, /^2026-01-01T00:00:00\.\d{3}Z$/)
      const second = await tasks.create({ title: 'Ship', description: 'to npm', priority: 'high' })
      assert.deepEqual(
        (await tasks.list()).map((task) => [task.id, task.title, task.priority]),
        [
          ['t-1', 'Write the README', 'medium'],
          ['t-2', 'Ship', 'high'],
        ],
      )
      assert.deepEqual(await tasks.get(second.id), second)
      assert.equal(await tasks.get('t-404'), undefined)
    })

    void it('refuses an empty title and unknown values, writing nothing', async () => {
      await using store = (await freshStore(harness)).store
      const tasks = store.tasks('main')
      assert.match(await rejectsWith(tasks.create({ title: '   ' }), 'invalid_input'), /title/)
      const priority = await rejectsWith(
        tasks.create({ title: 'x', priority: 'urgent' as 'high' }),
        'invalid_input',
      )
      assert.match(priority, /low, medium, high/)
      await rejectsWith(
        tasks.createMany([{ title: 'fine' }, { title: 'bad', status: 'done' as 'completed' }]),
        'invalid_input',
      )
      assert.deepEqual(await tasks.list(), [])
    })

    void it('updates fields, stamps completion and clears it when reopened', async () => {
      await using store = (await freshStore(harness)).store
      const tasks = store.tasks('main')
      const task = await tasks.create({ title: 'Fix the bug', description: 'in parse' })
      const started = await tasks.update(task.id, { status: 'in-progress', priority: 'high' })
      assert.equal(started.status, 'in-progress')
      assert.equal(started.priority, 'high')
      assert.equal(started.title, 'Fix the bug')
      assert.equal(started.description, 'in parse')
      assert.equal(started.completedAt, null)
      assert.ok(started.updatedAt > task.updatedAt)
      const done = await tasks.update(task.id, { status: 'completed' })
      assert.equal(done.completedAt, done.updatedAt)
      const renamed = await tasks.update(task.id, { title: 'Fix the parser bug' })
      assert.equal(renamed.completedAt, done.completedAt, 'completion time kept while completed')
      const reopened = await tasks.update(task.id, { status: 'blocked' })
      assert.equal(reopened.completedAt, null)
      assert.deepEqual(await tasks.get(task.id), reopened)
      assert.equal(reopened.createdAt, task.createdAt)
    })

    void it('answers not_found for an unknown id and invalid_input for bad values', async () => {
      await using store = (await freshStore(harness)).store
      const tasks = store.tasks('main')
      const task = await tasks.create({ title: 'A' })
      assert.match(
        await rejectsWith(tasks.update('t-99', { status: 'completed' }), 'not_found'),
        /task_list/,
      )
      await rejectsWith(
        tasks.update(task.id, { status: 'finished' as 'completed' }),
        'invalid_input',
      )
      await rejectsWith(tasks.update(task.id, { title: '' }), 'invalid_input')
      assert.deepEqual(await tasks.get(task.id), task)
    })

    void it('filters by status', async () => {
      await using store = (await freshStore(harness)).store
      const tasks = store.tasks('main')
      await tasks.createMany([{ title: 'a' }, { title: 'b' }, { title: 'c', status: 'blocked' }])
      await tasks.update('t-2', { status: 'completed' })
      assert.deepEqual(
        (await tasks.list({ status: 'pending' })).map((task) => task.id),
        ['t-1'],
      )
      assert.deepEqual(
        (await tasks.list({ status: 'completed' })).map((task) => task.id),
        ['t-2'],
      )
      assert.deepEqual((await tasks.list({ status: 'in-progress' })).length, 0)
      await rejectsWith(tasks.list({ status: 'open' as 'pending' }), 'invalid_input')
    })

    void it('keeps tasks across a close and a reopen', async () => {
      const { store, url } = await freshStore(harness)
      const task = await store.tasks('main').create({ title: 'Survive' })
      await store.close()
      await store.close()
      await rejectsWith(store.tasks('main').list(), 'not_available')
      await using again = await openStore(url, { dependencies: testDependencies() })
      assert.deepEqual(await again.tasks('main').list(), [task])
    })

    void it('loses no write when two connections write at once', async () => {
      const { store: first, url } = await freshStore(harness)
      await using one = first
      await using two = await openStore(url, {
        dependencies: {
          newTaskId: (() => {
            let n = 0
            return () => `u-${++n}`
          })(),
        },
      })
      const write = (tasks: ReturnType<typeof one.tasks>, prefix: string) =>
        Promise.all(
          Array.from({ length: 40 }, (_, index) => tasks.create({ title: `${prefix}-${index}` })),
        )
      await Promise.all([write(one.tasks('main'), 'one'), write(two.tasks('main'), 'two')])
      const titles = new Set((await one.tasks('main').list()).map((task) => task.title))
      assert.equal(titles.size, 80)
      const shared = (await one.tasks('main').createMany([{ title: 'shared' }]))[0]
      await Promise.all([
        one.tasks('main').update(shared?.id as string, { priority: 'high' }),
        two.tasks('main').update(shared?.id as string, { status: 'in-progress' }),
      ])
      const final = await two.tasks('main').get(shared?.id as string)
      assert.equal(final?.priority, 'high', 'neither update is lost')
      assert.equal(final?.status, 'in-progress', 'neither update is lost')
    })
  })
}
