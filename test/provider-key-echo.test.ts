/**
 * A provider that echoes the key in its error, end to end through the real `eitri run` and
 * `eitri runs show`, the key in the environment variable the configuration names (`apiKeyEnv`):
 * the Run fails naming the provider's complaint, and the key is in none of what eitri printed
 * or kept (stderr, the Run's row and journal, the store's file, the trace shown afterwards).
 */
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { describe, it } from 'node:test'
import { openStore } from '../src/store/open-store.ts'
import { runEitri } from './helpers/eitri-process.ts'
import { startModelWireServer } from './helpers/model-wire-server.ts'
import { makeScratch } from './helpers/scratch.ts'

const KEY = 'sk-other-secret-0c9b5e1d-must-not-leak'

describe('a provider echoing the key in its error', () => {
  it('fails the Run with the key withheld from stderr, the store and runs show', async () => {
    await using server = await startModelWireServer((request) => ({
      kind: 'status',
      status: 401,
      message: `Incorrect API key provided: ${String(request.headers['authorization'])}`,
    }))
    await using scratch = await makeScratch()
    await fs.writeFile(
      scratch.configPath,
      JSON.stringify({
        providers: {
          local: { type: 'openai-compatible', baseURL: server.openaiURL, apiKeyEnv: 'OTHER' },
        },
        prices: { 'local:stub-1': { input: 1, output: 2 } },
        agents: [
          {
            id: 'writer',
            prompt: 'You write files when asked.',
            tools: ['write_file'],
            access: 'workspace-write',
            modelPolicy: { provider: 'local', model: 'stub-1' },
            program: { kind: 'llm', budgetDollars: 1 },
          },
        ],
      }),
    )
    const storeFile = path.join(scratch.root, 'runs.sqlite')
    const flags = [...scratch.flags, '--store', `sqlite:${storeFile}`]
    const env = { ...process.env, OTHER: KEY }
    const run = await runEitri(['run', '--agent', 'writer', '--task', 'hello', '--yes', ...flags], {
      env,
    })
    // The control: the key went out, and the provider's complaint came back to eitri.
    assert.equal(server.requests[0]?.headers['authorization'], `Bearer ${KEY}`)
    assert.notEqual(run.status, 0)
    assert.match(run.stderr, /Incorrect API key provided: Bearer \[API key withheld\]/)
    assert.doesNotMatch(run.stderr + run.stdout, new RegExp(KEY))

    let id: string
    {
      await using store = await openStore(`sqlite:${storeFile}`)
      const [row] = await store.listRuns()
      assert.ok(row !== undefined)
      assert.deepEqual([row.status, row.reason], ['failed', 'model-call-failed'])
      id = row.id
      const events = await store.listRunEvents(id)
      assert.match(JSON.stringify(events), /API key withheld/)
      assert.doesNotMatch(JSON.stringify([row, events]), new RegExp(KEY))
    }
    const files = await fs.readdir(scratch.root)
    for (const file of files.filter((name) => name.startsWith('runs.sqlite'))) {
      const bytes = await fs.readFile(path.join(scratch.root, file))
      assert.ok(!bytes.includes(KEY), `${file} holds the key`)
    }
    const show = await runEitri(['runs', 'show', id, ...flags], { env })
    assert.equal(show.status, 0, show.stderr)
    assert.match(show.stdout, /API key withheld/)
    assert.doesNotMatch(show.stdout + show.stderr, new RegExp(KEY))
  })
})
