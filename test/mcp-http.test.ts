/**
 * End to end: `eitri serve --http`, driven by the MCP SDK's streamable HTTP client, plus the
 * raw requests a browser page or a stranger could send.
 */
import assert from 'node:assert/strict'
import type { ChildProcess } from 'node:child_process'
import http from 'node:http'
import path from 'node:path'
import { after, before, describe, it } from 'node:test'
import { setTimeout as delay } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { CallToolResultSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { runEitri, startEitri, startNode, stop } from './helpers/eitri-process.ts'
import { makeScratch, type Scratch } from './helpers/scratch.ts'
import { waitForFile } from './helpers/wait-for-file.ts'

const SLOW_SERVER = fileURLToPath(new URL('./fixtures/slow-tool-server.ts', import.meta.url))
const LISTENING = /listening on (http:\/\/\S+\/mcp)/

async function connect(url: string, headers: Record<string, string> = {}): Promise<Client> {
  const client = new Client({ name: 'eitri-test', version: '1.0.0' })
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers } }),
  )
  return client
}

interface RawResponse {
  status: number
  body: string
}

/** A request with exactly the headers given (fetch would not let us set Host). */
function rawPost(url: string, body: string, headers: Record<string, string>): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const target = new URL(url)
    const request = http.request(
      {
        host: target.hostname,
        port: target.port,
        path: target.pathname,
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          accept: 'application/json, text/event-stream',
          ...headers,
        },
      },
      (response) => {
        let data = ''
        response.on('data', (chunk: Buffer) => (data += chunk.toString()))
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body: data }))
      },
    )
    request.once('error', reject)
    request.end(body)
  })
}

const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: {
    protocolVersion: '2025-06-18',
    capabilities: {},
    clientInfo: { name: 'raw', version: '0' },
  },
})

describe('eitri serve --http on loopback', () => {
  let scratch: Scratch
  let server: ChildProcess
  let url: string

  before(async () => {
    scratch = await makeScratch({ 'src/a.ts': 'export const answer = 42\n' })
    const started = await startEitri(['serve', ...scratch.flags, '--http', '0'], LISTENING)
    server = started.child
    url = started.match[1] as string
  })
  after(async () => {
    await stop(server)
    await scratch.cleanup()
  })

  it('binds to 127.0.0.1 and prints the URL on stderr', () => {
    assert.match(url, /^http:\/\/127\.0\.0\.1:\d+\/mcp$/)
  })

  it('serves the tools to the SDK client', async () => {
    const client = await connect(url)
    try {
      const { tools } = await client.listTools()
      assert.ok(tools.some((tool) => tool.name === 'grep'))
      const result = (await client.callTool({
        name: 'grep',
        arguments: { pattern: 'answer' },
      })) as CallToolResult
      assert.equal(result.isError, false)
      assert.deepEqual(result.content, [
        { type: 'text', text: 'src/a.ts:1:export const answer = 42' },
      ])
      const refused = (await client.callTool({
        name: 'write_file',
        arguments: { path: '.mcp.json', content: '{}' },
      })) as CallToolResult
      assert.equal((refused.structuredContent as { code: string }).code, 'protected_path')
    } finally {
      await client.close()
    }
  })

  it('keeps two sessions apart and serves both', async () => {
    const [first, second] = await Promise.all([connect(url), connect(url)])
    try {
      assert.notEqual(
        (first.transport as StreamableHTTPClientTransport).sessionId,
        (second.transport as StreamableHTTPClientTransport).sessionId,
      )
      const results = await Promise.all([first.listTools(), second.listTools()])
      assert.deepEqual(results[0], results[1])
    } finally {
      await first.close()
      await second.close()
    }
  })

  it('refuses a foreign Host header (DNS rebinding)', async () => {
    const response = await rawPost(url, INITIALIZE, { host: `evil.example:${new URL(url).port}` })
    assert.equal(response.status, 403)
    assert.match(response.body, /Invalid Host/)
  })

  it('refuses a foreign Origin and accepts a loopback one', async () => {
    const foreign = await rawPost(url, INITIALIZE, { origin: 'http://evil.example' })
    assert.equal(foreign.status, 403)
    assert.match(foreign.body, /Origin not allowed/)
    const local = await rawPost(url, INITIALIZE, {
      origin: `http://localhost:${new URL(url).port}`,
    })
    assert.equal(local.status, 200)
  })

  it('answers malformed JSON, a request without a session and an unknown session with JSON-RPC errors', async () => {
    const malformed = await rawPost(url, '{"jsonrpc": "2.0", ', {})
    assert.equal(malformed.status, 400)
    assert.equal((JSON.parse(malformed.body) as { error: { code: number } }).error.code, -32700)
    const noSession = await rawPost(
      url,
      JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/list' }),
      {},
    )
    assert.equal(noSession.status, 400)
    const unknown = await rawPost(
      url,
      JSON.stringify({ jsonrpc: '2.0', id: 4, method: 'tools/list' }),
      { 'mcp-session-id': 'nope' },
    )
    assert.equal(unknown.status, 404)
    const client = await connect(url)
    await client.listTools()
    await client.close()
  })
})

describe('eitri serve --http beyond loopback', () => {
  it('refuses to start without a token', async () => {
    await using scratch = await makeScratch()
    const result = await runEitri(['serve', ...scratch.flags, '--http', '0.0.0.0:0'], {
      env: { ...process.env, EITRI_TOKEN: '' },
    })
    assert.equal(result.status, 1)
    assert.match(result.stderr, /without a bearer token/)
    assert.doesNotMatch(result.stderr, /\n\s+at /)
  })

  it('requires the bearer token on every request', async () => {
    await using scratch = await makeScratch()
    const { child, match } = await startEitri(
      ['serve', ...scratch.flags, '--http', '0.0.0.0:0', '--token', 's3cret'],
      LISTENING,
    )
    try {
      const url = (match[1] as string).replace('0.0.0.0', '127.0.0.1')
      const anonymous = await rawPost(url, INITIALIZE, {})
      assert.equal(anonymous.status, 401)
      const wrong = await rawPost(url, INITIALIZE, { authorization: 'Bearer nope' })
      assert.equal(wrong.status, 401)
      const client = await connect(url, { authorization: 'Bearer s3cret' })
      assert.ok((await client.listTools()).tools.length > 0)
      await client.close()
    } finally {
      await stop(child)
    }
  })
})

describe('cancellation over HTTP', () => {
  it("aborts the tool's signal when the client cancels the request", async () => {
    await using scratch = await makeScratch()
    const started = await startNode([SLOW_SERVER, 'http', scratch.workspace], LISTENING)
    try {
      const client = await connect(started.match[1] as string)
      const controller = new AbortController()
      const pending = client.callTool(
        { name: 'wait_for_cancel', arguments: { label: 'http' } },
        CallToolResultSchema,
        { signal: controller.signal },
      )
      await delay(200)
      controller.abort()
      await assert.rejects(pending, /abort/i)
      const marker = path.join(scratch.workspace, 'cancelled-http.txt')
      assert.equal(await waitForFile(marker), 'aborted')
      await client.close()
    } finally {
      await stop(started.child)
    }
  })
})
