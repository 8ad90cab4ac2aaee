import assert from 'node:assert/strict'
import { describe, it, type TestContext } from 'node:test'
import { openStore } from '../../store/open-store.ts'
import { contextWith } from '../../tool/test-context.ts'
import { ToolRegistry } from '../../tool/tool-registry.ts'
import type { ToolResult } from '../../tool/tool-result.ts'
import { Toolset } from '../../tool/toolset.ts'
import { taskTools } from './index.ts'

async function tools(t: TestContext) {
  let id = 0
  const store = await openStore('sqlite::memory:', {
    dependencies: { newTaskId: () => `t-${++id}` },
  })
  t.after(() => store.close())
  const toolset = new Toolset(
    new ToolRegistry(taskTools),
    taskTools.map((tool) => tool.name),
  )
  const ctx = { ...contextWith(), tasks: store.tasks('main') }
  return (name: string, input: unknown) => toolset.run({ name, input }, ctx)
}

function error(result: ToolResult, code: string): string {
  assert.equal(result.type, 'error', result.content)
  assert.equal(result.type === 'error' && result.code, code)
  return result.content
}

describe('task tools', () => {
  it('creates with defaults and answers the id in metadata', async (t) => {
    const call = await tools(t)
    const created = await call('task_create', { title: 'Write docs' })
    assert.equal(created.type, 'success')
    assert.equal(created.content, 'Created task t-1 [pending, medium] Write docs')
    assert.equal(created.metadata['id'], 't-1')
    const high = await call('task_create', {
      title: 'Fix CI',
      description: 'it is red',
      priority: 'high',
    })
    assert.equal(high.content, 'Created task t-2 [pending, high] Fix CI — it is red')
  })

  it('lists, filters and updates', async (t) => {
    const call = await tools(t)
    assert.equal((await call('task_list', {})).content, 'No tasks yet. Add one with task_create.')
    await call('task_create', { title: 'a' })
    await call('task_create', { title: 'b' })
    const updated = await call('task_update', { id: 't-2', status: 'completed', priority: 'low' })
    assert.equal(updated.content, 'Updated task t-2 [completed, low] b')
    assert.equal((updated.metadata['task'] as { completedAt: string }).completedAt !== null, true)
    const listed = await call('task_list', {})
    assert.equal(listed.content, 't-1 [pending, medium] a\nt-2 [completed, low] b')
    assert.equal(listed.metadata['count'], 2)
    assert.equal(
      (await call('task_list', { status: 'completed' })).content,
      't-2 [completed, low] b',
    )
    assert.equal((await call('task_list', { status: 'blocked' })).content, 'No blocked tasks.')
  })

  it('answers clear errors for bad ids and values', async (t) => {
    const call = await tools(t)
    await call('task_create', { title: 'a' })
    assert.match(
      error(await call('task_update', { id: 't-9', status: 'completed' }), 'not_found'),
      /No task with id "t-9".*task_list/,
    )
    assert.match(
      error(await call('task_update', { id: 't-1' }), 'invalid_input'),
      /at least one of status/,
    )
    assert.match(
      error(await call('task_update', { id: 't-1', status: 'done' }), 'invalid_input'),
      /status/,
    )
    assert.match(error(await call('task_create', { title: '  ' }), 'invalid_input'), /title/)
    assert.match(
      error(await call('task_create', { title: 'x', priority: 'critical' }), 'invalid_input'),
      /priority/,
    )
    assert.match(error(await call('task_list', { status: 'open' }), 'invalid_input'), /status/)
  })

  it('says so when the caller has no store', async () => {
    const toolset = new Toolset(new ToolRegistry(taskTools), ['task_list'])
    const result = await toolset.run({ name: 'task_list', input: {} }, contextWith())
    assert.match(error(result, 'not_available'), /store/)
  })
})
