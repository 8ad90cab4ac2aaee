/**
 * Runs of `eitri serve` processes sharing one real PostgreSQL store: two live servers never
 * interrupt each other's Runs (each renews its leases, and each sweeps); a server killed with
 * SIGKILL mid-Run leaves a Run that the restarted server, or the other one, ends as
 * `failed`/`interrupted` once its lease lapses, never `running` forever.
 */
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import { after, before, describe, it } from 'node:test'
import { setTimeout as delay } from 'node:timers/promises'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import {
  getDefaultEnvironment,
  StdioClientTransport,
} from '@modelcontextprotocol/sdk/client/stdio.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { EITRI_BIN } from './helpers/eitri-process.ts'
import { startPostgresCluster, type PostgresCluster } from './helpers/postgres-cluster.ts'
import { makeScratch, type Scratch } from './helpers/scratch.ts'

const LEASE_MS = 1_500
const CONFIG = {
  agents: [
    {
      id: 'slow',
      name: 'Slow',
      prompt: 'Take your time.',
      program: { kind: 'scripted', delayMs: 120_000, reply: 'done' },
    },
  ],
  runs: { leaseTtlMs: LEASE_MS, heartbeatMs: 300, sweepMs: 400 },
}

let cluster: PostgresCluster
before(async () => {
  cluster = await startPostgresCluster()
})
after(() => cluster.stop())

interface Server {
  readonly client: Client
  readonly transport: StdioClientTransport
  call(name: string, args: Record<string, unknown>): Promise<Record<string, unknown>>
}

async function serve(scratch: Scratch, url: string): Promise<Server> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [EITRI_BIN, 'serve', ...scratch.flags, '--store', url],
    env: getDefaultEnvironment(),
    stderr: 'pipe',
  })
  const client = new Client({ name: 'eitri-run-servers-test', version: '1.0.0' })
  await client.connect(transport)
  return {
    client,
    transport,
    async call(name, args) {
      const result = (await client.callTool({ name, arguments: args })) as CallToolResult
      const text = result.content.map((part) => (part.type === 'text' ? part.text : '')).join('')
      assert.equal(result.isError, false, text)
      return (result.structuredContent as { metadata: Record<string, unknown> }).metadata
    },
  }
}

async function scratchWithConfig(): Promise<Scratch> {
  const scratch = await makeScratch({ 'README.md': '# project\n' })
  await fs.writeFile(scratch.configPath, JSON.stringify(CONFIG))
  return scratch
}

describe('Runs of servers sharing one PostgreSQL store', () => {
  it('never interrupts a live server’s Run, and ends a killed one’s as interrupted', async () => {
    const url = await cluster.createDatabase('servers')
    await using scratchA = await scratchWithConfig()
    await using scratchB = await scratchWithConfig()
    const a = await serve(scratchA, url)
    const b = await serve(scratchB, url)
    try {
      const runA = (await a.call('agent_hire', { agent: 'slow', task: 'a' }))['id'] as string
      const runB = (await b.call('agent_hire', { agent: 'slow', task: 'b' }))['id'] as string
      // Several lease lengths, with both servers sweeping every 400 ms: neither Run lapses.
      await delay(LEASE_MS * 3)
      const running = (await b.call('run_list', { status: 'running' }))['runs'] as {
        id: string
      }[]
      assert.deepEqual(running.map((run) => run.id).sort(), [runA, runB].sort())

      const pid = a.transport.pid
      assert.ok(pid !== null, 'server A has a process id')
      process.kill(pid, 'SIGKILL')
      await a.client.close().catch(() => undefined)
      // Restarted on the same workspace and store: A's Run is interrupted once its lease lapsed.
      const restarted = await serve(scratchA, url)
      try {
        const ended = await restarted.call('run_await', { id: runA, wait_s: 20 })
        assert.equal(ended['status'], 'failed')
        assert.equal(ended['reason'], 'interrupted')
        const alive = await restarted.call('run_observe', { id: runB })
        assert.equal(alive['status'], 'running', 'the live server’s Run is never interrupted')
      } finally {
        await restarted.client.close()
      }
      // The restarted server closed cleanly: it cancels its own Runs, never another server's.
      const after = await b.call('run_observe', { id: runB })
      assert.equal(after['status'], 'running', 'closing one server leaves the other’s Run alone')
      const cancelled = await b.call('run_cancel', { id: runB })
      assert.equal(cancelled['status'], 'cancelled')
    } finally {
      await b.client.close()
      await a.client.close().catch(() => undefined)
    }
  })
})
