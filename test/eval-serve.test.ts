/**
 * End to end: js_eval through `eitri serve` (streamable HTTP, two MCP connections to one
 * server): definitions persist, connections never see each other's sessions, a timeout, a
 * memory blow-up and a cancel each answer as they should, and the server stays healthy after
 * each.
 */
import assert from 'node:assert/strict'
import type { ChildProcess } from 'node:child_process'
import { after, before, describe, it } from 'node:test'
import { setTimeout as delay } from 'node:timers/promises'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { CallToolResultSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { startEitri, stop } from './helpers/eitri-process.ts'
import { makeScratch, type Scratch } from './helpers/scratch.ts'

/** The URL and the token the server prints. */
const LISTENING = /listening on (http:\/\/\S+\/mcp)\n.*"Authorization: Bearer ([A-Za-z0-9_-]+)"/

async function connect(url: string, token: string): Promise<Client> {
  const client = new Client({ name: 'eitri-eval-test', version: '1.0.0' })
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      requestInit: { headers: { authorization: `Bearer ${token}` } },
    }),
  )
  return client
}

async function evaluate(
  client: Client,
  code: string,
  extra: Record<string, unknown> = {},
  signal?: AbortSignal,
): Promise<{ text: string; code: string | undefined; metadata: Record<string, unknown> }> {
  const result = (await client.callTool(
    { name: 'js_eval', arguments: { code, ...extra } },
    CallToolResultSchema,
    { timeout: 120_000, ...(signal === undefined ? {} : { signal }) },
  )) as CallToolResult
  const [first] = result.content
  const structured = result.structuredContent as {
    code?: string
    metadata: Record<string, unknown>
  }
  return {
    text: first?.type === 'text' ? first.text : '',
    code: structured.code,
    metadata: structured.metadata,
  }
}

describe('js_eval through eitri serve', () => {
  let scratch: Scratch
  let server: ChildProcess
  let url: string
  let alice: Client
  let bob: Client

  const healthy = async (): Promise<void> => {
    assert.equal((await evaluate(alice, '20 + 22', { session: 'health' })).text, '42')
    assert.equal((await evaluate(bob, '"still here"')).text, 'still here')
    assert.equal(server.exitCode, null)
  }

  before(async () => {
    scratch = await makeScratch({ 'notes.md': 'hello\n' })
    const started = await startEitri(['serve', '--http', '0', ...scratch.flags], LISTENING)
    server = started.child
    url = started.match[1] as string
    alice = await connect(url, started.match[2] as string)
    bob = await connect(url, started.match[2] as string)
  })
  after(async () => {
    await alice.close()
    await bob.close()
    await stop(server)
    await scratch.cleanup()
  })

  it('keeps definitions from one call to the next, and reaches the workspace', async () => {
    await evaluate(alice, 'const greeting = (await fs.readFile("notes.md")).trim()')
    assert.equal((await evaluate(alice, 'greeting + ", world"')).text, 'hello, world')
    await healthy()
  })

  it('keeps two connections apart, even when they name the same session', async () => {
    await evaluate(alice, 'const secret = "alice only"', { session: 'shared-name' })
    assert.equal(
      (await evaluate(bob, 'typeof secret', { session: 'shared-name' })).text,
      'undefined',
    )
    assert.equal((await evaluate(bob, 'typeof greeting')).text, 'undefined')
    assert.equal((await evaluate(alice, 'secret', { session: 'shared-name' })).text, 'alice only')
    await healthy()
  })

  it('stops an eval at its timeout and answers timeout', async () => {
    await evaluate(alice, 'const beforeTimeout = 1', { session: 'slow' })
    const answer = await evaluate(alice, 'for (;;) {}', { session: 'slow', timeout_s: 1 })
    assert.equal(answer.code, 'timeout')
    assert.equal((await evaluate(alice, 'beforeTimeout', { session: 'slow' })).text, '1')
    await healthy()
  })

  it('resets only the session that goes over its memory limit', async () => {
    await evaluate(alice, 'const kept = "kept"', { session: 'other' })
    const answer = await evaluate(
      alice,
      'const hoard = []; for (;;) hoard.push({ n: hoard.length })',
      {
        session: 'hungry',
        timeout_s: 60,
      },
    )
    assert.equal(answer.code, 'memory_limit', answer.text)
    assert.equal((await evaluate(alice, 'kept', { session: 'other' })).text, 'kept')
    assert.match(
      (await evaluate(alice, 'typeof hoard', { session: 'hungry' })).text,
      /session reset.*undefined/s,
    )
    await healthy()
  })

  it('stops a cancelled eval, and the session says what it lost', async () => {
    await evaluate(bob, 'const doomed = 1', { session: 'cancel-me' })
    const controller = new AbortController()
    const pending = evaluate(
      bob,
      'for (;;) {}',
      { session: 'cancel-me', timeout_s: 300 },
      controller.signal,
    )
    await delay(300)
    controller.abort()
    await assert.rejects(pending, /abort/i)
    // Were the eval still running, this call would wait behind it for its 300 s.
    const next = await evaluate(bob, 'typeof doomed', { session: 'cancel-me' })
    assert.match(
      next.text,
      /^\[session reset: an eval was cancelled while it computed.*\]\nundefined$/s,
    )
    await healthy()
  })
})
