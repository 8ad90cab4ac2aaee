/**
 * The Run tools through a real workshop over a SQLite store that another connection fills (as
 * another process would): `run_list` newest first with its filters, a dead owner's Run swept
 * to failed/interrupted, `run_observe` with the store's field names and the journal, and
 * input errors that name the field; and `run_observe` over MCP from `eitri serve`.
 */
import assert from 'node:assert/strict'
import path from 'node:path'
import { describe, it } from 'node:test'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import {
  getDefaultEnvironment,
  StdioClientTransport,
} from '@modelcontextprotocol/sdk/client/stdio.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { openStore } from '../src/store/open-store.ts'
import type { RunEvent, RunRecord } from '../src/store/run-record.ts'
import type { ToolResult } from '../src/tool/tool-result.ts'
import { openWorkshop } from '../src/workshop/workshop.ts'
import { EITRI_BIN } from './helpers/eitri-process.ts'
import { makeScratch } from './helpers/scratch.ts'

function failure(result: ToolResult, code: string): string {
  assert.equal(result.type, 'error', result.content)
  assert.equal(result.type === 'error' && result.code, code)
  return result.content
}

describe('run_list and run_observe', () => {
  it('list and observe Runs another connection wrote, with the store’s field names', async () => {
    await using scratch = await makeScratch()
    const url = `sqlite:${path.join(scratch.root, 'runs.sqlite')}`
    await using writer = await openStore(url)
    await writer.admitRun({ id: 'boss', agentId: 'planner' })
    await writer.appendRunEvents('boss', [{ type: 'note', data: { text: 'hello' } }])
    await writer.finishRun('boss', { status: 'failed', reason: 'tool', error: { code: 'x' } })
    await writer.settleRun('boss', { status: 'discarded', reason: 'it failed' })
    // Newest first is by admission time, to the millisecond: apart, so the order is the test's.
    await new Promise((resolve) => setTimeout(resolve, 5))
    await writer.admitRun({
      id: 'worker',
      parentId: 'boss',
      agentId: 'helper',
      lease: { owner: 'alive', ttlMs: 600_000 },
    })
    await new Promise((resolve) => setTimeout(resolve, 5))
    await writer.admitRun({ id: 'dead', agentId: 'helper', lease: { owner: 'gone', ttlMs: 1 } })
    await new Promise((resolve) => setTimeout(resolve, 20))

    await using workshop = await openWorkshop({
      workspace: scratch.workspace,
      stateDir: scratch.stateDir,
      configPath: scratch.configPath,
      store: url,
    })
    const listed = await workshop.call('run_list', {})
    assert.equal(listed.type, 'success', listed.content)
    const runs = listed.metadata['runs'] as RunRecord[]
    assert.deepEqual(
      runs.map((run) => [run.id, run.status, run.reason]),
      [
        ['dead', 'failed', 'interrupted'],
        ['worker', 'running', null],
        ['boss', 'failed', 'tool'],
      ],
    )
    assert.match(listed.content, /^dead \[failed: interrupted; effects review\] agent helper/m)

    const children = await workshop.call('run_list', { parent: 'boss' })
    assert.deepEqual(
      (children.metadata['runs'] as RunRecord[]).map((run) => run.id),
      ['worker'],
    )
    const running = await workshop.call('run_list', { status: 'running' })
    assert.deepEqual(
      (running.metadata['runs'] as RunRecord[]).map((run) => run.id),
      ['worker'],
    )
    const none = await workshop.call('run_list', { status: 'cancelled' })
    assert.equal(none.content, 'No cancelled Runs.')

    const observed = await workshop.call('run_observe', { id: 'boss' })
    assert.equal(observed.type, 'success', observed.content)
    const { metadata } = observed
    assert.equal(metadata['status'], 'failed')
    assert.equal(metadata['reason'], 'tool')
    assert.deepEqual(metadata['error'], { code: 'x' })
    assert.equal(metadata['settlementStatus'], 'discarded')
    assert.equal(metadata['settlementReason'], 'it failed')
    assert.equal(metadata['parentId'], null)
    assert.equal(metadata['agentId'], 'planner')
    const events = metadata['events'] as RunEvent[]
    assert.ok(
      events.some((event) => event.type === 'note'),
      JSON.stringify(events),
    )
    assert.deepEqual(
      events.map((event) => event.sequence),
      events.map((_, index) => index + 1),
    )
    assert.match(observed.content, /^ {2}\d+\. \S+ note \{"text":"hello"\}$/m)
    const worker = await workshop.call('run_observe', { id: 'worker' })
    assert.equal(worker.metadata['parentId'], 'boss')
  })

  it('refuses bad input naming the field, and an unknown id naming run_list', async () => {
    await using scratch = await makeScratch()
    await using workshop = await openWorkshop({
      workspace: scratch.workspace,
      stateDir: scratch.stateDir,
      configPath: scratch.configPath,
    })
    assert.equal((await workshop.call('run_list', {})).content, 'No Runs.')
    assert.match(
      failure(await workshop.call('run_list', { status: 'done' }), 'invalid_input'),
      /status/,
    )
    assert.match(failure(await workshop.call('run_observe', { id: ' ' }), 'invalid_input'), /id/)
    assert.match(failure(await workshop.call('run_observe', {}), 'invalid_input'), /id/)
    assert.match(
      failure(await workshop.call('run_observe', { id: 'nope' }), 'not_found'),
      /No Run with id "nope"\. run_list shows/,
    )
  })

  it('answers run_observe over MCP with the Run row and its events', async () => {
    await using scratch = await makeScratch()
    const url = `sqlite:${path.join(scratch.root, 'runs.sqlite')}`
    {
      await using writer = await openStore(url)
      await writer.admitRun({ id: 'remote', agentId: 'helper' })
      await writer.appendRunEvents('remote', [{ type: 'note', data: 'seen' }])
      await writer.finishRun('remote', { status: 'completed', value: 7, output: 'ok' })
    }
    const client = new Client({ name: 'eitri-runs-test', version: '1.0.0' })
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [EITRI_BIN, 'serve', ...scratch.flags, '--store', url],
        env: getDefaultEnvironment(),
        stderr: 'pipe',
      }),
    )
    try {
      const result = (await client.callTool({
        name: 'run_observe',
        arguments: { id: 'remote' },
      })) as CallToolResult
      assert.equal(result.isError, false, JSON.stringify(result.content))
      const { metadata } = result.structuredContent as { metadata: Record<string, unknown> }
      assert.equal(metadata['status'], 'completed')
      assert.equal(metadata['value'], 7)
      assert.equal(metadata['output'], 'ok')
      assert.equal(metadata['settlementStatus'], 'open')
      assert.ok((metadata['events'] as RunEvent[]).some((event) => event.data === 'seen'))
      const refused = (await client.callTool({
        name: 'run_list',
        arguments: { status: 'finished' },
      })) as CallToolResult
      assert.equal(refused.isError, true)
    } finally {
      await client.close()
    }
  })
})
