/**
 * A model call that fails says which call: the provider and model, and the host it went to,
 * whether the server is not there (connection refused) or answers with an error that echoes
 * the key, which stays withheld.
 */
import assert from 'node:assert/strict'
import net from 'node:net'
import { describe, it } from 'node:test'
import { llmFixture, llmTeam } from '../src/agent/llm/test-llm-fixture.ts'
import { createModelCatalog } from '../src/provider/create-model-catalog.ts'
import { startModelWireServer } from './helpers/model-wire-server.ts'

const KEY = 'sk-failure-test-7f3a9c2e-must-not-leak'

/** A loopback port nothing listens on. */
async function closedPort(): Promise<number> {
  const server = net.createServer()
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve))
  const { port } = server.address() as net.AddressInfo
  await new Promise<void>((resolve) => server.close(() => resolve()))
  return port
}

function catalogAt(baseURL: string) {
  return createModelCatalog({
    providers: { local: { type: 'openai-compatible', baseURL, apiKeyEnv: 'LOCAL_KEY' } },
    prices: { 'local:stub-1': { input: 1, output: 2 } },
    env: { LOCAL_KEY: KEY },
  })
}

describe('a failed model call', () => {
  it('names the provider, the model and the host, never the key', async (t) => {
    await using server = await startModelWireServer((request) => ({
      kind: 'status',
      status: 401,
      message: `Incorrect API key provided: ${String(request.headers['authorization'])}`,
    }))
    const port = await closedPort()
    const cases = [
      { url: `http://127.0.0.1:${port}/v1`, host: `127.0.0.1:${port}`, says: /ECONNREFUSED/ },
      {
        url: server.openaiURL,
        host: new URL(server.openaiURL).host,
        says: /Incorrect API key provided: Bearer \[API key withheld\]/,
      },
    ]
    await Promise.all(
      cases.map(async ({ url, host, says }) => {
        const { runtime } = await llmFixture(t, catalogAt(url))
        const handle = await runtime.hire(llmTeam('caller', { budgetDollars: 1 }), 'caller', {
          task: 'hello',
        })
        const result = await handle.result()
        assert.equal(result.status, 'failed')
        const error = result.status === 'failed' ? String(result.error) : ''
        assert.ok(error.startsWith(`The call to model local:stub-1 at ${host} failed: `), error)
        assert.match(error, says)
        assert.ok(!error.includes(KEY), error)
      }),
    )
    // The control: the key went out with the call the server refused.
    assert.equal(server.requests[0]?.headers['authorization'], `Bearer ${KEY}`)
  })
})
