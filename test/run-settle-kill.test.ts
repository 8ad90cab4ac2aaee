/**
 * A Run whose automatic settlement asks the person (over `eitri serve`'s MCP elicitation)
 * whether to merge its world into main: its process holds the Run until it is settled. Killed
 * with SIGKILL while asking, the Run (ended, its settlement not come) is kept for review by the
 * next process's sweep, so a person can merge or discard it; never open for good, which nothing
 * may settle. Control: left alive past its lease while the question is open, with another
 * process sweeping, the Run stays the asking process's, and the person's yes merges it.
 */
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { describe, it } from 'node:test'
import { setTimeout as delay } from 'node:timers/promises'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { ElicitRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { EITRI_BIN, runEitri } from './helpers/eitri-process.ts'
import { LEASE_MS, SHORT_LEASES } from './helpers/killed-run.ts'
import { runsOf, writeModelConfig } from './helpers/llm-cli-setup.ts'
import { startModelWireServer, type WireReply } from './helpers/model-wire-server.ts'
import { makeScratch } from './helpers/scratch.ts'

const WRITE: WireReply = {
  kind: 'tool-call',
  name: 'write_file',
  input: { path: 'hello.txt', content: 'hello from a Run\n' },
}

describe('a Run whose merge into main is being asked when its process dies', () => {
  for (const killed of [false, true]) {
    it(
      killed
        ? 'is kept for review by the next process, and `eitri runs discard` settles it'
        : 'control: alive past its lease while asking, it stays its own, and the yes merges it',
      async () => {
        await using model = await startModelWireServer([
          WRITE,
          { kind: 'text', text: 'I wrote hello.txt.' },
        ])
        await using scratch = await makeScratch()
        const { flags, url } = await writeModelConfig(scratch, model.openaiURL, {
          extra: { runs: SHORT_LEASES },
        })
        const asked = Promise.withResolvers<void>()
        const answer = Promise.withResolvers<'approve'>()
        const client = new Client(
          { name: 'kill-client', version: '1.0.0' },
          { capabilities: { elicitation: {} } },
        )
        client.setRequestHandler(ElicitRequestSchema, async () => {
          asked.resolve()
          return { action: 'accept', content: { decision: await answer.promise } }
        })
        const transport = new StdioClientTransport({
          command: process.execPath,
          args: [EITRI_BIN, 'serve', ...flags],
          stderr: 'pipe',
        })
        await client.connect(transport)
        const pid = transport.pid
        assert.ok(pid !== null)
        let id: string
        try {
          const hire = (await client.callTool({
            name: 'agent_hire',
            arguments: { agent: 'writer', task: 'write hello.txt', settlement: 'automatic' },
          })) as CallToolResult
          assert.notEqual(hire.isError, true, JSON.stringify(hire))
          id = (hire.structuredContent as { metadata: { id: string } }).metadata.id
          await asked.promise
          // The Run has ended; its settlement waits for the person.
          const [asking] = await runsOf(url)
          assert.deepEqual([asking?.status, asking?.settlementStatus], ['completed', 'open'])
          if (killed) process.kill(pid, 'SIGKILL')
          // Past a lease, another process sweeps (listing Runs does).
          await delay(LEASE_MS + 300)
          const list = await runEitri(['runs', '--json', ...flags])
          assert.equal(list.status, 0, list.stderr)
          if (!killed) {
            assert.equal((await runsOf(url))[0]?.settlementStatus, 'open')
            answer.resolve('approve')
            const awaited = (await client.callTool({
              name: 'run_await',
              arguments: { id, wait_s: 30 },
            })) as CallToolResult
            assert.notEqual(awaited.isError, true, JSON.stringify(awaited))
          }
        } finally {
          await client.close().catch(() => undefined)
        }
        const inMain = () =>
          fs
            .access(path.join(scratch.workspace, 'hello.txt'))
            .then(() => true)
            .catch(() => false)
        const [run] = await runsOf(url)
        if (!killed) {
          assert.deepEqual([run?.settlementStatus, run?.settlementReason], ['merged', 'automatic'])
          assert.equal(await inMain(), true)
          return
        }
        assert.equal(run?.settlementStatus, 'review')
        assert.match(run?.settlementReason ?? '', /^settlement-interrupted: its process/)
        // A person settles it as any Run kept for review; nothing reached main.
        const discard = await runEitri(['runs', 'discard', id, ...flags])
        assert.equal(discard.status, 0, discard.stderr)
        assert.equal((await runsOf(url))[0]?.settlementStatus, 'discarded')
        assert.equal(await inMain(), false)
      },
    )
  }
})
