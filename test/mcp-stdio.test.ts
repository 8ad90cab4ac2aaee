/**
 * End to end: `eitri serve` over stdio, driven by the MCP SDK's own client.
 */
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import fs from 'node:fs/promises'
import path from 'node:path'
import { after, before, describe, it } from 'node:test'
import { setTimeout as delay } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { CallToolResultSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { EITRI_BIN } from './helpers/eitri-process.ts'
import { makeScratch, type Scratch } from './helpers/scratch.ts'
import { rawInitialize } from './helpers/raw-initialize.ts'
import { BUILT_IN_TOOL_NAMES } from './helpers/tool-names.ts'
import { waitForFile } from './helpers/wait-for-file.ts'

const SLOW_SERVER = fileURLToPath(new URL('./fixtures/slow-tool-server.ts', import.meta.url))

async function connect(args: string[]): Promise<Client> {
  const client = new Client({ name: 'eitri-test', version: '1.0.0' })
  await client.connect(
    new StdioClientTransport({ command: process.execPath, args, stderr: 'pipe' }),
  )
  return client
}

async function call(
  client: Client,
  name: string,
  args: Record<string, unknown>,
): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args })) as CallToolResult
}

function text(result: CallToolResult): string {
  const [first] = result.content
  return first?.type === 'text' ? first.text : ''
}

describe('eitri serve over stdio', () => {
  let scratch: Scratch
  let client: Client

  before(async () => {
    scratch = await makeScratch({ 'README.md': '# hello\n' })
    client = await connect([EITRI_BIN, 'serve', ...scratch.flags])
  })
  after(async () => {
    await client.close()
    await scratch.cleanup()
  })

  it('introduces itself as eitri', () => {
    assert.equal(client.getServerVersion()?.name, 'eitri')
  })

  it('lists the file tools with object input schemas', async () => {
    const { tools } = await client.listTools()
    assert.deepEqual(
      tools.map((tool) => tool.name),
      [...BUILT_IN_TOOL_NAMES],
    )
    for (const tool of tools) assert.equal(tool.inputSchema.type, 'object')
  })

  it('writes and reads through the contract, with the ToolResult as structured content', async () => {
    const written = await call(client, 'write_file', { path: 'notes/a.md', content: 'alpha\n' })
    assert.equal(written.isError, false)
    assert.deepEqual(written.structuredContent, {
      type: 'success',
      content: 'Wrote 6 bytes to notes/a.md (new file)',
      metadata: { path: 'notes/a.md', bytes: 6, created: true },
    })
    assert.equal(await fs.readFile(path.join(scratch.workspace, 'notes/a.md'), 'utf8'), 'alpha\n')
    const read = await call(client, 'read_file', { path: 'notes/a.md' })
    assert.equal(text(read), 'alpha\n')
  })

  it('answers refusals as error results with isError and a code', async () => {
    const outside = await call(client, 'read_file', { path: '../state/x' })
    assert.equal(outside.isError, true)
    assert.equal((outside.structuredContent as { code: string }).code, 'path_outside_workspace')
    assert.doesNotMatch(text(outside), new RegExp(scratch.root))
  })

  it('answers an unknown tool and bad arguments with errors, and keeps serving', async () => {
    const unknown = await call(client, 'format_disk', {})
    assert.equal(unknown.isError, true)
    assert.match(text(unknown), /^Unknown tool: format_disk\./)
    const bad = await call(client, 'read_file', { path: ['not', 'a', 'string'] })
    assert.equal((bad.structuredContent as { code: string }).code, 'invalid_input')
    assert.match(text(bad), /- path: /)
    const still = await call(client, 'read_file', { path: 'README.md' })
    assert.equal(text(still), '# hello\n')
  })
})

describe('eitri serve --tools', () => {
  it('offers only the named tools and refuses the others', async () => {
    await using scratch = await makeScratch()
    const client = await connect([
      EITRI_BIN,
      'serve',
      ...scratch.flags,
      '--tools',
      'read_file,glob',
    ])
    try {
      const { tools } = await client.listTools()
      assert.deepEqual(
        tools.map((tool) => tool.name),
        ['read_file', 'glob'],
      )
      const refused = await call(client, 'write_file', { path: 'x', content: 'y' })
      assert.equal(
        text(refused),
        'Tool not available to this agent: write_file. Available tools: read_file, glob.',
      )
      await assert.rejects(fs.access(path.join(scratch.workspace, 'x')))
    } finally {
      await client.close()
    }
  })
})

describe('the stdio protocol stream', () => {
  it('answers a malformed line with a parse error, writes nothing but JSON-RPC to stdout, and keeps serving', async () => {
    await using scratch = await makeScratch()
    const child = spawn(process.execPath, [EITRI_BIN, 'serve', ...scratch.flags], { stdio: 'pipe' })
    let stdout = ''
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()))
    try {
      child.stdin.write('this is not json\n')
      child.stdin.write('{"jsonrpc":"2.0","id":1,"method":"tools/call"}\n')
      child.stdin.write(`${JSON.stringify(rawInitialize(2))}\n`)
      for (let waited = 0; !stdout.includes('"id":2') && waited < 10_000; waited += 20)
        await delay(20)
      const messages = stdout
        .trim()
        .split('\n')
        .map(
          (line) => JSON.parse(line) as { id: unknown; error?: { code: number }; result?: unknown },
        )
      assert.ok(
        messages.some((message) => message.id === null && message.error?.code === -32700),
        stdout,
      )
      assert.ok(
        messages.some((message) => message.id === 1 && message.error !== undefined),
        'an invalid request is answered with an error',
      )
      assert.ok(
        messages.some((message) => message.id === 2 && message.result !== undefined),
        'the server still initializes',
      )
      assert.equal(child.exitCode, null)
    } finally {
      child.stdin.end()
      await new Promise((resolve) => child.once('exit', resolve))
    }
  })
})

describe('large messages over stdio', () => {
  it("takes a write over the SDK reader's 10 MiB, and answers one over the limit with an error and goes on", async () => {
    await using scratch = await makeScratch()
    const child = spawn(process.execPath, [EITRI_BIN, 'serve', ...scratch.flags], { stdio: 'pipe' })
    let stdout = ''
    child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()))
    const send = (message: unknown) => child.stdin.write(`${JSON.stringify(message)}\n`)
    const answered = async (id: number) => {
      for (let waited = 0; !stdout.includes(`"id":${id}`) && child.exitCode === null; waited += 20)
        await delay(20)
    }
    try {
      send(rawInitialize(1))
      await answered(1)
      send({ jsonrpc: '2.0', method: 'notifications/initialized' })
      // 12 MiB of content: the SDK's reader closed the connection past 10 MiB, ending the server.
      const content = 'x'.repeat(12 * 1024 * 1024)
      send({
        jsonrpc: '2.0',
        id: 2,
        method: 'tools/call',
        params: { name: 'write_file', arguments: { path: 'big.txt', content } },
      })
      await answered(2)
      assert.equal((await fs.stat(path.join(scratch.workspace, 'big.txt'))).size, content.length)
      // Past the limit: skipped as it arrives, answered, and the next call still served.
      child.stdin.write(
        `{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"write_file","arguments":{"path":"huge.txt","content":"${'y'.repeat(65 * 1024 * 1024)}"}}}\n`,
      )
      send({
        jsonrpc: '2.0',
        id: 4,
        method: 'tools/call',
        params: { name: 'read_file', arguments: { path: 'big.txt', limit: 1 } },
      })
      await answered(4)
      const messages = stdout
        .trim()
        .split('\n')
        .map(
          (line) =>
            JSON.parse(line) as {
              id: unknown
              error?: { code: number; message: string }
              result?: { isError?: boolean }
            },
        )
      // Answered to request 3 (its id leads the line), saying how to send it in parts.
      const refused = messages.find((message) => message.id === 3)
      assert.equal(refused?.error?.code, -32600, stdout.slice(0, 2000))
      assert.match(
        refused.error?.message ?? '',
        /not read and nothing was done\. Send the content in parts/,
      )
      assert.equal(messages.find((message) => message.id === 2)?.result?.isError, false)
      assert.equal(messages.find((message) => message.id === 4)?.result?.isError, false)
      assert.equal(
        await fs.stat(path.join(scratch.workspace, 'huge.txt')).catch(() => undefined),
        undefined,
      )
      assert.equal(child.exitCode, null)
    } finally {
      child.stdin.end()
      await new Promise((resolve) => child.once('exit', resolve))
    }
  })
})

describe('a call over the message limit through the SDK client', () => {
  it('fails at once with -32600 and what to do, not at the client’s timeout', async () => {
    await using scratch = await makeScratch()
    const client = await connect([EITRI_BIN, 'serve', ...scratch.flags])
    try {
      // The TypeScript SDK writes a request's id last: found at the line's end.
      const content = 'y'.repeat(65 * 1024 * 1024)
      const failure = await client
        .callTool({ name: 'write_file', arguments: { path: 'huge.txt', content } }, undefined, {
          timeout: 60_000,
        })
        .then(
          () => undefined,
          (error: unknown) => error as { code?: number; message?: string },
        )
      assert.equal(failure?.code, -32600, failure?.message)
      assert.match(failure?.message ?? '', /Request too large.*Send the content in parts/)
      // The connection goes on.
      const listed = await call(client, 'glob', { pattern: '*' })
      assert.notEqual(listed.isError, true)
    } finally {
      await client.close()
    }
  })
})

describe('cancellation over stdio', () => {
  it("aborts the tool's signal when the client cancels the request", async () => {
    await using scratch = await makeScratch()
    const client = await connect([SLOW_SERVER, 'stdio', scratch.workspace])
    try {
      const controller = new AbortController()
      const pending = client.callTool(
        { name: 'wait_for_cancel', arguments: { label: 'stdio' } },
        CallToolResultSchema,
        {
          signal: controller.signal,
        },
      )
      await delay(200)
      controller.abort()
      await assert.rejects(pending, /abort/i)
      const marker = path.join(scratch.workspace, 'cancelled-stdio.txt')
      assert.equal(await waitForFile(marker), 'aborted')
    } finally {
      await client.close()
    }
  })
})

describe('a first shell command prepared for over stdio', () => {
  /** The programs eitri serve started itself (its direct children), by their argv. */
  async function children(pid: number): Promise<string[][]> {
    const tasks = await fs.readdir(`/proc/${pid}/task`)
    const ids = (
      await Promise.all(
        tasks.map((task) => fs.readFile(`/proc/${pid}/task/${task}/children`, 'utf8')),
      )
    ).flatMap((line) => line.split(' ').filter((word) => word !== ''))
    const argvs = await Promise.all(
      ids.map((id) => fs.readFile(`/proc/${id}/cmdline`, 'utf8').catch(() => '')),
    )
    return argvs.map((argv) => argv.split('\0'))
  }
  const isLayerHost = (argv: string[]): boolean =>
    path.basename(argv[0] ?? '') === 'perl' && argv[1] === '-e'

  it('starts the jail of the session (its layer host) once the client lists the tools, before any call', async () => {
    await using scratch = await makeScratch({ 'README.md': '# hello\n' })
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [EITRI_BIN, 'serve', ...scratch.flags],
      stderr: 'pipe',
    })
    const client = new Client({ name: 'eitri-test', version: '1.0.0' })
    await client.connect(transport)
    try {
      const pid = transport.pid
      assert.ok(pid !== null)
      // The control: connected, nothing of the jail runs yet (it would hold up the handshake).
      assert.deepEqual((await children(pid)).filter(isLayerHost), [])
      await client.listTools()
      // Prepared while the client's model thinks: the first call then waits for none of it.
      let found = false
      for (let attempt = 0; attempt < 200 && !found; attempt++) {
        found = (await children(pid)).some(isLayerHost)
        if (!found) await delay(100)
      }
      assert.ok(found, 'no layer host started after tools/list')
      const ran = await call(client, 'shell', { command: 'cat README.md' })
      assert.equal(text(ran), '# hello\n\n[exit 0]')
    } finally {
      await client.close()
    }
  })
})
