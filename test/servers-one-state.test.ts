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
    // What main's history may not do is drop a file once recorded: a process that committed its
    // own older tree on top of the other's snapshot did. (Whether a file written by the other
    // server a moment before is in this process's next snapshot depends on when its watcher
    // hears of it, as for any edit made outside the process.)
    const history = git(
      'log',
      '--first-parent',
      '--format=%h %p %s',
      '--name-status',
      'refs/eitri/main',
    )
    const commits = git('rev-list', '--first-parent', '--reverse', 'refs/eitri/main')
      .split('\n')
      .filter((commit) => commit !== '')
    let recorded = new Set<string>()
    for (const commit of commits) {
      const names = new Set(
        git('ls-tree', '--name-only', commit)
          .split('\n')
          .filter((name) => /^s[01]-\d+\.txt$/.test(name)),
      )
      for (const name of recorded)
        assert.ok(names.has(name), `${commit} dropped ${name}\n${history}`)
      recorded = names
    }
    // The control: the race did record the servers' files.
    assert.ok(recorded.size >= ROUNDS, `${[...recorded].join(' ')}\n${history}`)
  })
})
