/**
 * End to end through `eitri serve` and the MCP SDK's client: tasks and knowledge survive a
 * restart of the server, two servers on one PostgreSQL database see each other's tasks, and a
 * store that cannot be opened stops the server with what to fix.
 */
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { after, before, describe, it } from 'node:test'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import {
  getDefaultEnvironment,
  StdioClientTransport,
} from '@modelcontextprotocol/sdk/client/stdio.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { EITRI_BIN, runEitri } from './helpers/eitri-process.ts'
import { startPostgresCluster, type PostgresCluster } from './helpers/postgres-cluster.ts'
import { makeScratch } from './helpers/scratch.ts'

async function serve(args: string[], env: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: 'eitri-store-test', version: '1.0.0' })
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [EITRI_BIN, 'serve', ...args],
      env: { ...getDefaultEnvironment(), ...env },
      stderr: 'pipe',
    }),
  )
  return client
}

async function call(
  client: Client,
  name: string,
  args: Record<string, unknown>,
): Promise<CallToolResult> {
  const result = (await client.callTool({ name, arguments: args })) as CallToolResult
  assert.equal(result.isError, false, JSON.stringify(result.content))
  return result
}

const text = (result: CallToolResult): string =>
  result.content[0]?.type === 'text' ? result.content[0].text : ''

describe('eitri serve keeps tasks and knowledge in the store', () => {
  it('survives a restart of the server (SQLite in the state folder)', async () => {
    await using scratch = await makeScratch()
    const first = await serve(scratch.flags)
    const created = await call(first, 'task_create', {
      title: 'Survive a restart',
      priority: 'high',
    })
    const id = (created.structuredContent as { metadata: { id: string } }).metadata.id
    await call(first, 'task_update', { id, status: 'in-progress' })
    await call(first, 'knowledge_add', {
      title: 'Restart',
      body: 'The store keeps [[Tasks]] durable.',
    })
    await first.close()

    const second = await serve(scratch.flags)
    try {
      assert.equal(
        text(await call(second, 'task_list', {})),
        `${id} [in-progress, high] Survive a restart`,
      )
      assert.match(
        text(await call(second, 'knowledge_search', { query: 'durable' })),
        /^1\. Restart/,
      )
      assert.match(
        text(await call(second, 'knowledge_links', { title: 'tasks' })),
        /Links back: Restart/,
      )
    } finally {
      await second.close()
    }
    const files = await fs.readdir(path.join(scratch.stateDir, 'workspaces'), { recursive: true })
    assert.ok(
      files.some((file) => file.endsWith('store.sqlite')),
      files.join(', '),
    )
  })

  it('stops with what to fix when the store cannot be opened, serving nothing', async () => {
    await using scratch = await makeScratch()
    const notDatabase = path.join(scratch.root, 'notes.txt')
    await fs.writeFile(notDatabase, 'not a database\n'.repeat(100))
    const bad = await runEitri(['serve', ...scratch.flags, '--store', `sqlite:${notDatabase}`])
    assert.equal(bad.status, 1)
    assert.match(bad.stderr, /is not an SQLite database.*--store sqlite:PATH/)
    assert.equal(bad.stdout, '')
    const malformed = await runEitri(['tools', ...scratch.flags, '--store', 'mysql://db/x'])
    assert.equal(malformed.status, 1)
    assert.match(malformed.stderr, /--store \(or EITRI_STORE\) takes sqlite:PATH/)
    const fromEnvironment = await runEitri(['tools', ...scratch.flags], {
      env: { ...process.env, EITRI_STORE: `sqlite:${notDatabase}` },
    })
    assert.equal(fromEnvironment.status, 1)
    assert.match(fromEnvironment.stderr, /is not an SQLite database/)
  })
})

describe('eitri serve --store postgres://…', () => {
  let cluster: PostgresCluster
  before(async () => {
    cluster = await startPostgresCluster()
  })
  after(() => cluster.stop())

  it('two servers on one database see each other’s tasks', async () => {
    const url = await cluster.createDatabase()
    await using left = await makeScratch()
    await using right = await makeScratch()
    const one = await serve([...left.flags, '--store', url])
    const two = await serve(right.flags, { EITRI_STORE: url })
    try {
      const created = await call(one, 'task_create', { title: 'Made by one' })
      const id = (created.structuredContent as { metadata: { id: string } }).metadata.id
      assert.equal(text(await call(two, 'task_list', {})), `${id} [pending, medium] Made by one`)
      await call(two, 'task_update', { id, status: 'completed' })
      await call(two, 'knowledge_add', { title: 'Shared', body: 'Written by two.' })
      assert.equal(
        text(await call(one, 'task_list', { status: 'completed' })),
        `${id} [completed, medium] Made by one`,
      )
      assert.match(text(await call(one, 'knowledge_search', { query: 'written' })), /^1\. Shared/)
    } finally {
      await Promise.all([one.close(), two.close()])
    }
  })
})
