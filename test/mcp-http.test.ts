/**
 * End to end: `eitri serve --http`, driven by the MCP SDK's streamable HTTP client, plus the
 * raw requests a browser page or a stranger could send.
 */
import assert from 'node:assert/strict'
import type { ChildProcess } from 'node:child_process'
import fs from 'node:fs/promises'
import http from 'node:http'
import path from 'node:path'
import { after, before, describe, it } from 'node:test'
import { setTimeout as delay } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { CallToolResultSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { runEitri, startEitri, startNode, stop } from './helpers/eitri-process.ts'
import { rawInitialize } from './helpers/raw-initialize.ts'
import { makeScratch, type Scratch } from './helpers/scratch.ts'
import { waitForFile } from './helpers/wait-for-file.ts'

const SLOW_SERVER = fileURLToPath(new URL('./fixtures/slow-tool-server.ts', import.meta.url))
const LISTENING = /listening on (http:\/\/\S+\/mcp)/
/** The URL and the token the server prints, like Jupyter. */
const LISTENING_WITH_TOKEN =
  /listening on (http:\/\/\S+\/mcp)\n.*"Authorization: Bearer ([A-Za-z0-9_-]+)"/

async function connectWith(
  url: string,
  headers: Record<string, string> = {},
  name = 'eitri-test',
): Promise<Client> {
  const client = new Client({ name, version: '1.0.0' })
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

const INITIALIZE = JSON.stringify(rawInitialize(1))

describe('eitri serve --http on loopback', () => {
  let scratch: Scratch
  let server: ChildProcess
  let url: string
  let token: string
  const connect = (address: string) => connectWith(address, { authorization: `Bearer ${token}` })

  before(async () => {
    scratch = await makeScratch({ 'src/a.ts': 'export const answer = 42\n' })
    const started = await startEitri(
      ['serve', ...scratch.flags, '--http', '0'],
      LISTENING_WITH_TOKEN,
    )
    server = started.child
    url = started.match[1] as string
    token = started.match[2] as string
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

  it('requires the token on loopback too: any local user can reach 127.0.0.1', async () => {
    const anonymous = await rawPost(url, INITIALIZE, {})
    assert.equal(anonymous.status, 401)
    const wrong = await rawPost(url, INITIALIZE, { authorization: 'Bearer nope' })
    assert.equal(wrong.status, 401)
    const right = await rawPost(url, INITIALIZE, { authorization: `Bearer ${token}` })
    assert.equal(right.status, 200, 'the positive control: the printed token is let in')
  })

  it('refuses a foreign Host header (DNS rebinding)', async () => {
    const response = await rawPost(url, INITIALIZE, {
      host: `evil.example:${new URL(url).port}`,
      authorization: `Bearer ${token}`,
    })
    assert.equal(response.status, 403)
    assert.match(response.body, /Invalid Host/)
  })

  it('refuses a foreign Origin, a page of another local server too, and accepts its own', async () => {
    const port = Number(new URL(url).port)
    for (const origin of [
      'http://evil.example',
      `http://localhost:${port + 1}`,
      'http://127.0.0.1',
      `https://localhost:${port}`,
    ]) {
      const foreign = await rawPost(url, INITIALIZE, { origin, authorization: `Bearer ${token}` })
      assert.equal(foreign.status, 403, origin)
      assert.match(foreign.body, /Origin not allowed/)
    }
    for (const origin of [`http://localhost:${port}`, `http://127.0.0.1:${port}`]) {
      const local = await rawPost(url, INITIALIZE, { origin, authorization: `Bearer ${token}` })
      assert.equal(local.status, 200, origin)
    }
  })

  it('answers malformed JSON, a request without a session and an unknown session with JSON-RPC errors', async () => {
    const authorization = `Bearer ${token}`
    const malformed = await rawPost(url, '{"jsonrpc": "2.0", ', { authorization })
    assert.equal(malformed.status, 400)
    assert.equal((JSON.parse(malformed.body) as { error: { code: number } }).error.code, -32700)
    const noSession = await rawPost(
      url,
      JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/list' }),
      { authorization },
    )
    assert.equal(noSession.status, 400)
    const unknown = await rawPost(
      url,
      JSON.stringify({ jsonrpc: '2.0', id: 4, method: 'tools/list' }),
      { 'mcp-session-id': 'nope', authorization },
    )
    assert.equal(unknown.status, 404)
    const client = await connect(url)
    await client.listTools()
    await client.close()
  })
})

describe('eitri serve --http beyond loopback', () => {
  it('refuses to start without a token, even when asked to', async () => {
    await using scratch = await makeScratch()
    const result = await runEitri(
      ['serve', ...scratch.flags, '--http', '0.0.0.0:0', '--no-token'],
      {
        env: { ...process.env, EITRI_TOKEN: '' },
      },
    )
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
      const client = await connectWith(url, { authorization: 'Bearer s3cret' })
      assert.ok((await client.listTools()).tools.length > 0)
      await client.close()
    } finally {
      await stop(child)
    }
  })
})

describe('the HTTP token', () => {
  const stateFile = async (scratch: Scratch) => {
    const [folder] = await fs.readdir(path.join(scratch.stateDir, 'workspaces'))
    return path.join(scratch.stateDir, 'workspaces', folder ?? '', 'http-token')
  }

  it('is made once, kept with mode 0600 in the state folder, and the same after a restart', async () => {
    await using scratch = await makeScratch()
    const tokens: string[] = []
    for (let start = 0; start < 2; start += 1) {
      const started = await startEitri(
        ['serve', ...scratch.flags, '--http', '0'],
        LISTENING_WITH_TOKEN,
      )
      try {
        tokens.push(started.match[2] as string)
        assert.match(started.stderr(), /kept in .*http-token/)
        const client = await connectWith(started.match[1] as string, {
          authorization: `Bearer ${started.match[2]}`,
        })
        assert.ok((await client.listTools()).tools.length > 0)
        await client.close()
      } finally {
        await stop(started.child)
      }
    }
    assert.equal(tokens[0], tokens[1], 'saved client settings keep working')
    assert.match(tokens[0] ?? '', /^[A-Za-z0-9_-]{43}$/)
    const file = await stateFile(scratch)
    assert.equal((await fs.readFile(file, 'utf8')).trim(), tokens[0])
    assert.equal((await fs.stat(file)).mode & 0o777, 0o600)
  })

  it('is replaced when others could read it', async () => {
    await using scratch = await makeScratch()
    const first = await runEitri(['mcp-config', ...scratch.flags, '--http', '8765'])
    const file = await stateFile(scratch)
    const old = (await fs.readFile(file, 'utf8')).trim()
    assert.match(first.stdout, new RegExp(`Bearer ${old}`))
    await fs.chmod(file, 0o644)
    const second = await runEitri(['mcp-config', ...scratch.flags, '--http', '8765'])
    const renewed = (await fs.readFile(file, 'utf8')).trim()
    assert.notEqual(renewed, old)
    assert.match(second.stdout, new RegExp(`Bearer ${renewed}`))
    assert.equal((await fs.stat(file)).mode & 0o777, 0o600)
  })

  it('is written by mcp-config --http, with the state folder, configuration and store kept', async () => {
    await using scratch = await makeScratch()
    const store = path.join(scratch.root, 'elsewhere.sqlite')
    const config = await runEitri([
      'mcp-config',
      ...scratch.flags,
      '--store',
      `sqlite:${store}`,
      '--http',
      '0',
    ])
    assert.equal(config.status, 2, 'a port that changes at each start cannot be saved')
    const printed = await runEitri([
      'mcp-config',
      ...scratch.flags,
      '--store',
      `sqlite:${store}`,
      '--http',
      '8765',
    ])
    assert.equal(printed.status, 0, printed.stderr)
    const token = (await fs.readFile(await stateFile(scratch), 'utf8')).trim()
    assert.match(
      printed.stdout,
      /claude mcp add --transport http eitri http:\/\/127\.0\.0\.1:8765\/mcp/,
    )
    assert.match(printed.stdout, new RegExp(`--header 'Authorization: Bearer ${token}'`))
    assert.match(printed.stdout, new RegExp(`"Authorization": "Bearer ${token}"`))
    assert.match(
      printed.stdout,
      new RegExp(`http_headers = \\{ "Authorization" = "Bearer ${token}" \\}`),
    )
    for (const kept of [scratch.stateDir, scratch.configPath, `sqlite:${store}`])
      assert.ok(printed.stdout.includes(kept), `the serve line keeps ${kept}`)
    // The server started as printed uses the same token.
    const started = await startEitri(
      ['serve', ...scratch.flags, '--store', `sqlite:${store}`, '--http', '0'],
      LISTENING_WITH_TOKEN,
    )
    try {
      assert.equal(started.match[2], token)
    } finally {
      await stop(started.child)
    }
  })

  it('keeps --state-dir, --config and --store in the stdio settings too', async () => {
    await using scratch = await makeScratch()
    const printed = await runEitri(['mcp-config', ...scratch.flags, '--store', 'sqlite:rel.sqlite'])
    assert.equal(printed.status, 0, printed.stderr)
    const settings = JSON.parse(/\{[\s\S]*?\n\}/.exec(printed.stdout)?.[0] ?? '{}') as {
      mcpServers: { eitri: { args: string[] } }
    }
    const args = settings.mcpServers.eitri.args
    const after = (flag: string) => args[args.indexOf(flag) + 1]
    assert.equal(after('--state-dir'), scratch.stateDir)
    assert.equal(after('--config'), scratch.configPath)
    assert.equal(after('--store'), `sqlite:${path.resolve('rel.sqlite')}`, 'made absolute')
  })

  it('--token overrides the stored one; --no-token serves loopback without one, with a warning', async () => {
    await using scratch = await makeScratch()
    const given = await startEitri(
      ['serve', ...scratch.flags, '--http', '0', '--token', 'chosen-token'],
      LISTENING_WITH_TOKEN,
    )
    try {
      assert.equal(given.match[2], 'chosen-token')
      assert.equal((await rawPost(given.match[1] as string, INITIALIZE, {})).status, 401)
    } finally {
      await stop(given.child)
    }
    const open = await startEitri(
      ['serve', ...scratch.flags, '--http', '0', '--no-token'],
      /WARNING: no token.*\n/,
    )
    try {
      const url = /listening on (http:\/\/\S+\/mcp)/.exec(open.stderr())?.[1] as string
      assert.equal((await rawPost(url, INITIALIZE, {})).status, 200)
    } finally {
      await stop(open.child)
    }
    const both = await runEitri([
      'serve',
      ...scratch.flags,
      '--http',
      '0',
      '--no-token',
      '--token',
      'x',
    ])
    assert.equal(both.status, 2)
  })
})

describe('fork ownership over HTTP', () => {
  const text = (result: unknown) => {
    const call = result as CallToolResult
    return {
      isError: call.isError === true,
      text: call.content[0]?.type === 'text' ? call.content[0].text : '',
      code: (call.structuredContent as { code?: string } | undefined)?.code,
    }
  }

  it('one connection never reaches another’s fork; the owner does (positive control)', async () => {
    await using scratch = await makeScratch({ 'a.txt': 'main\n' })
    const started = await startEitri(
      ['serve', ...scratch.flags, '--http', '0'],
      LISTENING_WITH_TOKEN,
    )
    const headers = { authorization: `Bearer ${started.match[2]}` }
    const url = started.match[1] as string
    const [first, second] = await Promise.all([
      connectWith(url, headers),
      connectWith(url, headers),
    ])
    try {
      const call = async (client: Client, name: string, input: Record<string, unknown>) =>
        text(await client.callTool({ name, arguments: input }))
      const forked = await call(first, 'workspace_fork', { name: 'feature' })
      const id = /id (f-[0-9a-f]{8})/.exec(forked.text)?.[1] as string
      await call(first, 'room_write', { fork: id, files: [{ path: 'a.txt', content: 'first\n' }] })
      assert.doesNotMatch((await call(second, 'workspace_list', {})).text, /feature|f-/)
      for (const [name, input] of [
        ['room_write', { fork: id, files: [{ path: 'a.txt', content: 'second\n' }] }],
        ['room_read', { fork: 'feature', path: 'a.txt' }],
        ['workspace_discard', { fork: id }],
        ['workspace_use', { fork: 'feature' }],
      ] as const) {
        const refused = await call(second, name, input)
        assert.equal(refused.code, 'not_found', `${name}: ${refused.text}`)
      }
      assert.equal((await call(first, 'room_read', { fork: id, path: 'a.txt' })).text, 'first\n')
      // The person at the terminal sees every fork, with its owner.
      const forks = await runEitri(['forks', ...scratch.flags])
      assert.match(forks.stdout, new RegExp(`${id}.*feature.*connection-[0-9a-f]{12}`))
      assert.equal((await call(first, 'workspace_discard', { fork: id })).isError, false)
    } finally {
      await first.close()
      await second.close()
      await stop(started.child)
    }
  })

  it('--isolate gives each connection one fork, named after its client', async () => {
    await using scratch = await makeScratch({ 'a.txt': 'main\n' })
    const started = await startEitri(
      ['serve', ...scratch.flags, '--http', '0', '--isolate'],
      LISTENING_WITH_TOKEN,
    )
    const headers = { authorization: `Bearer ${started.match[2]}` }
    const url = started.match[1] as string
    const clients = [
      await connectWith(url, headers, 'Claude Code'),
      await connectWith(url, headers, 'Claude Code'),
    ]
    try {
      for (const client of clients) {
        const written = text(
          await client.callTool({
            name: 'write_file',
            arguments: { path: 'a.txt', content: 'agent\n' },
          }),
        )
        assert.equal(written.isError, false, written.text)
      }
      assert.equal(await fs.readFile(path.join(scratch.workspace, 'a.txt'), 'utf8'), 'main\n')
      const forks = JSON.parse((await runEitri(['forks', '--json', ...scratch.flags])).stdout) as {
        name: string
      }[]
      assert.deepEqual(
        forks.map((fork) => fork.name).sort(),
        ['claude-code-1', 'claude-code-1'],
        'one fork per connection (each numbered among its own), none for the server itself',
      )
      const refused = text(
        await clients[0]?.callTool({
          name: 'room_write',
          arguments: { fork: 'main', files: [{ path: 'a.txt', content: 'agent\n' }] },
        }),
      )
      assert.equal(refused.code, 'permission_denied', 'main only through a person')
    } finally {
      for (const client of clients) await client.close()
      await stop(started.child)
    }
  })
})

describe('cancellation over HTTP', () => {
  it("aborts the tool's signal when the client cancels the request", async () => {
    await using scratch = await makeScratch()
    const started = await startNode([SLOW_SERVER, 'http', scratch.workspace], LISTENING)
    try {
      const client = await connectWith(started.match[1] as string)
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
