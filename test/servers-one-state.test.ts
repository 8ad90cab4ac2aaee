/**
 * Two `eitri serve` processes on one workspace and one state folder, driven by MCP SDK clients:
 * racing writes to main and forks (each snapshots main) all succeed, main's history keeps every
 * file, and both servers close when their clients do.
 */
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import fs from 'node:fs/promises'
import path from 'node:path'
import { describe, it } from 'node:test'
import { setTimeout as delay } from 'node:timers/promises'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { connectServe, type ServeToolCall } from './helpers/serve-client.ts'
import { makeScratch } from './helpers/scratch.ts'

const ROUNDS = 12

describe('two servers on one state', () => {
  it('racing write_file and workspace_fork calls all succeed, and both servers close', async () => {
    await using scratch = await makeScratch({ 'README.md': '# project\n' })
    const clients = [0, 1].map(() => new Client({ name: 'servers-one-state', version: '1' }))
    const calls: ServeToolCall[] = []
    for (const client of clients) calls.push(await connectServe(client, scratch))
    const failures: string[] = []
    const call = async (server: number, name: string, input: Record<string, unknown>) => {
      const result = await (calls[server] as ServeToolCall)(name, input)
      if (result.isError) failures.push(`${server} ${name}: ${result.text}`)
    }
    try {
      for (let round = 0; round < ROUNDS; round++) {
        await Promise.all([
          call(0, 'write_file', { path: `s0-${round}.txt`, content: `${round}\n` }),
          call(1, 'workspace_fork', { name: `s1-${round}` }),
          call(0, 'workspace_fork', { name: `s0-${round}` }),
          call(1, 'write_file', { path: `s1-${round}.txt`, content: `${round}\n` }),
        ])
      }
      assert.deepEqual(failures, [])
    } finally {
      // A hang here once followed such a race: each close is given a bound, and a server
      // that does not end fails the test instead of stalling it.
      const closed = await Promise.all(
        clients.map((client) =>
          Promise.race([
            client.close().then(() => 'closed'),
            delay(30_000, 'hung', { ref: false }),
          ]),
        ),
      )
      assert.deepEqual(closed, ['closed', 'closed'])
    }
    const found = (await fs.readdir(scratch.stateDir, { recursive: true })).find(
      (entry) => path.basename(entry) === 'history.git',
    )
    assert.ok(found !== undefined, 'the history repository')
    const gitDir = path.join(scratch.stateDir, found)
    const git = (...args: string[]) =>
      execFileSync('git', ['--git-dir', gitDir, ...args], { encoding: 'utf8' })
    const listed = git('ls-tree', '--name-only', 'refs/eitri/main')
    // Each round's forks snapshot main after the round before wrote its files.
    for (let round = 0; round < ROUNDS - 1; round++)
      for (const server of ['s0', 's1'])
        assert.match(
          listed,
          new RegExp(`^${server}-${round}\\.txt$`, 'm'),
          git('log', '--format=%h %p %s', '--name-status', 'refs/eitri/main'),
        )
  })
})
