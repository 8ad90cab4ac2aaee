import assert from 'node:assert/strict'
import { describe, it, type TestContext } from 'node:test'
import { openStore } from '../../store/open-store.ts'
import { contextWith } from '../../tool/test-context.ts'
import { ToolRegistry } from '../../tool/tool-registry.ts'
import type { ToolResult } from '../../tool/tool-result.ts'
import { Toolset } from '../../tool/toolset.ts'
import { knowledgeTools } from './index.ts'

async function tools(t: TestContext) {
  const store = await openStore('sqlite::memory:')
  t.after(() => store.close())
  const toolset = new Toolset(
    new ToolRegistry(knowledgeTools),
    knowledgeTools.map((tool) => tool.name),
  )
  const ctx = { ...contextWith(), knowledge: store.knowledge('main') }
  return (name: string, input: unknown) => toolset.run({ name, input }, ctx)
}

function error(result: ToolResult, code: string): string {
  assert.equal(result.type, 'error', result.content)
  assert.equal(result.type === 'error' && result.code, code)
  return result.content
}

describe('knowledge tools', () => {
  it('adds, replaces by title and reports links', async (t) => {
    const call = await tools(t)
    const added = await call('knowledge_add', {
      title: 'Store',
      body: 'Kept in [[SQLite]] or [[PostgreSQL]].',
    })
    assert.equal(added.content, 'Added the knowledge entry "Store". Links to: SQLite, PostgreSQL.')
    assert.deepEqual(added.metadata, {
      title: 'Store',
      created: true,
      links: ['SQLite', 'PostgreSQL'],
    })
    const replaced = await call('knowledge_add', { title: 'store', body: 'Plain text.' })
    assert.equal(replaced.content, 'Replaced the knowledge entry "store".')
  })

  it('searches with ranked, marked snippets', async (t) => {
    const call = await tools(t)
    await call('knowledge_add', { title: 'SQLite', body: 'An embedded database in one file.' })
    await call('knowledge_add', { title: 'Kittens', body: 'Small cats that sleep a lot.' })
    const found = await call('knowledge_search', { query: 'embedded database', limit: 5 })
    assert.equal(found.type, 'success')
    assert.match(found.content, /^1\. SQLite\n {3}.*«(embedded|database)»/)
    assert.equal(found.metadata['count'], 1)
    assert.equal(
      (await call('knowledge_search', { query: 'zeppelin' })).content,
      'No knowledge entries match "zeppelin".',
    )
    error(await call('knowledge_search', { query: 'x', limit: 0 }), 'invalid_input')
    error(await call('knowledge_search', { query: '' }), 'invalid_input')
  })

  it('lists links out and back, and says when a title is unknown', async (t) => {
    const call = await tools(t)
    await call('knowledge_add', { title: 'Store', body: 'Uses [[SQLite]] and [[PostgreSQL]].' })
    await call('knowledge_add', { title: 'SQLite', body: 'A file.' })
    await call('knowledge_add', { title: 'Jail', body: 'Not the [[store]].' })
    assert.equal(
      (await call('knowledge_links', { title: 'store' })).content,
      'Store\nLinks out: SQLite, PostgreSQL (not written yet)\nLinks back: Jail',
    )
    assert.equal(
      (await call('knowledge_links', { title: 'PostgreSQL' })).content,
      'PostgreSQL (no entry yet; only mentioned)\nLinks out: (none)\nLinks back: Store',
    )
    assert.match(
      error(await call('knowledge_links', { title: 'Nothing' }), 'not_found'),
      /knowledge_search/,
    )
  })

  it('says so when the caller has no store', async () => {
    const toolset = new Toolset(new ToolRegistry(knowledgeTools), ['knowledge_search'])
    const result = await toolset.run(
      { name: 'knowledge_search', input: { query: 'x' } },
      contextWith(),
    )
    assert.match(error(result, 'not_available'), /store/)
  })
})
