/**
 * End to end through `eitri serve` over stdio with the MCP SDK client: a js_eval program hires
 * two scripted agents from a roster file in the workspace and joins them, another races a fast
 * one against a slow one, and `run_list` / `run_observe` then read the durable facts: every
 * status, the loser cancelled and discarded, each Run a root of the session (no parent, no
 * children), nothing left running.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import {
  getDefaultEnvironment,
  StdioClientTransport,
} from '@modelcontextprotocol/sdk/client/stdio.js'
import { CallToolResultSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { EITRI_BIN } from './helpers/eitri-process.ts'
import { makeScratch } from './helpers/scratch.ts'

const ROSTER = JSON.stringify({
  agents: [
    { id: 'fast', program: { kind: 'scripted', delayMs: 10, result: 'fast done' } },
    { id: 'slow', program: { kind: 'scripted', delayMs: 5000, result: 'slow done' } },
    { id: 'echo', program: { kind: 'echo' } },
  ],
})

interface Answer {
  readonly text: string
  readonly isError: boolean
  readonly metadata: Record<string, unknown>
}

async function call(client: Client, name: string, args: Record<string, unknown>): Promise<Answer> {
  const result = (await client.callTool({ name, arguments: args }, CallToolResultSchema, {
    timeout: 60_000,
  })) as CallToolResult
  const [first] = result.content
  return {
    text: first?.type === 'text' ? first.text : '',
    isError: result.isError === true,
    metadata: (result.structuredContent as { metadata: Record<string, unknown> }).metadata,
  }
}

describe('the js_eval agent namespace through eitri serve', () => {
  it('joins and races Runs from a program, and run_list/run_observe read what happened', async () => {
    await using scratch = await makeScratch({ 'team.json': ROSTER })
    const client = new Client({ name: 'eitri-agents-test', version: '1.0.0' })
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [EITRI_BIN, 'serve', ...scratch.flags],
        env: getDefaultEnvironment(),
        stderr: 'pipe',
      }),
    )
    try {
      const joined = await call(client, 'js_eval', {
        code: `
          const a = await agent.hire('team.json', 'echo', { task: 'left' })
          const b = await agent.hire('team.json', 'fast', { task: 'right' })
          const results = await agent.join([a, b])
          JSON.stringify({ ids: [a.id, b.id], results: results.map((r) => [r.status, r.value]) })`,
      })
      assert.equal(joined.isError, false, joined.text)
      const join = JSON.parse(joined.text) as { ids: string[]; results: unknown[] }
      assert.deepEqual(join.results, [
        ['completed', 'left'],
        ['completed', 'fast done'],
      ])

      const started = Date.now()
      const raced = await call(client, 'js_eval', {
        code: `
          const team = await agent.roster((await (await agent.roster()).make({ id: 'fast', program: { kind: 'scripted', delayMs: 10, result: 'fast done' } })).agents)
          const withSlow = await team.make({ id: 'slow', program: { kind: 'scripted', delayMs: 5000, result: 'slow done' } })
          const slow = await agent.hire(withSlow, 'slow', { task: 'race' })
          const fast = await agent.hire(withSlow, 'fast', { task: 'race' })
          const winner = await agent.race([slow, fast])
          JSON.stringify({ slow: slow.id, fast: fast.id, winner: winner.id, value: winner.value })`,
      })
      assert.equal(raced.isError, false, raced.text)
      assert.ok(Date.now() - started < 4500, 'the race waited for the slow agent')
      const race = JSON.parse(raced.text) as {
        slow: string
        fast: string
        winner: string
        value: unknown
      }
      assert.equal(race.winner, race.fast)
      assert.equal(race.value, 'fast done')

      // The durable facts, read back through the Run tools.
      const listed = await call(client, 'run_list', {})
      const runs = listed.metadata['runs'] as Record<string, unknown>[]
      assert.equal(runs.length, 4)
      assert.deepEqual(
        runs.filter((run) => run['status'] === 'running'),
        [],
      )
      const running = await call(client, 'run_list', { status: 'running' })
      assert.deepEqual(running.metadata['runs'], [])
      const observe = async (id: string) => (await call(client, 'run_observe', { id })).metadata
      for (const id of [...join.ids, race.fast]) {
        const run = await observe(id)
        assert.equal(run['status'], 'completed', id)
        assert.equal(run['settlementStatus'], 'merged', id)
        assert.equal(run['parentId'], null, id)
      }
      const loser = await observe(race.slow)
      assert.equal(loser['status'], 'cancelled')
      assert.equal(loser['settlementStatus'], 'discarded')
      assert.equal(loser['agentId'], 'slow')
      assert.equal(loser['parentId'], null)
      assert.deepEqual((await observe(join.ids[0] as string))['agentId'], 'echo')
      // Roots of the session: none has children.
      for (const id of [...join.ids, race.fast, race.slow]) {
        const children = await call(client, 'run_list', { parent: id })
        assert.deepEqual(children.metadata['runs'], [], id)
      }
    } finally {
      await client.close()
    }
  })
})
