/**
 * End to end: `eitri serve` survives evals that ask for far more memory than it has, through
 * every capability that can bring data in (a sparse gibibyte read eight times at once, read in
 * parts eight at once, read through tools.call, a flood of shell output), and keeps answering.
 * Its peak resident memory (VmHWM) must stay far below the data asked for.
 */
import assert from 'node:assert/strict'
import type { ChildProcess } from 'node:child_process'
import fs from 'node:fs'
import path from 'node:path'
import { after, before, describe, it } from 'node:test'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { CallToolResultSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { startEitri, stop } from './helpers/eitri-process.ts'
import { makeScratch, type Scratch } from './helpers/scratch.ts'

/** The URL and the token the server prints. */
const LISTENING = /listening on (http:\/\/\S+\/mcp)\n.*"Authorization: Bearer ([A-Za-z0-9_-]+)"/
const GIB = 1024 ** 3
/** The most the server's peak resident memory may be: far below any one gibibyte read. */
const MAX_SERVER_PEAK_BYTES = 768 * 1024 * 1024

/** The server's peak resident memory so far, from /proc. */
function peakResident(pid: number): number {
  const status = fs.readFileSync(`/proc/${pid}/status`, 'utf8')
  const kilobytes = /^VmHWM:\s+(\d+) kB$/m.exec(status)?.[1]
  assert.ok(kilobytes !== undefined, 'VmHWM in /proc/PID/status')
  return Number(kilobytes) * 1024
}

describe('eitri serve survives any eval', () => {
  let scratch: Scratch
  let server: ChildProcess
  let client: Client

  /** Runs `code` in a session of its own, so one test's memory reset never shows in another. */
  const evaluate = async (
    code: string,
    session = 'faults',
  ): Promise<{ text: string; code: string | undefined }> => {
    const result = (await client.callTool(
      { name: 'js_eval', arguments: { code, session, timeout_s: 300 } },
      CallToolResultSchema,
      { timeout: 320_000 },
    )) as CallToolResult
    const [first] = result.content
    return {
      text: first?.type === 'text' ? first.text : '',
      code: (result.structuredContent as { code?: string } | undefined)?.code,
    }
  }
  const healthy = async (): Promise<void> => {
    assert.equal((await evaluate('20 + 22', 'health')).text, '42')
    assert.equal(server.exitCode, null)
    const peak = peakResident(server.pid as number)
    assert.ok(peak < MAX_SERVER_PEAK_BYTES, `the server's peak resident memory was ${peak} bytes`)
  }

  before(async () => {
    scratch = await makeScratch({ 'small.txt': 'small\n' })
    const big = path.join(scratch.workspace, 'big.bin')
    fs.writeFileSync(big, '')
    // Sparse: a gibibyte that costs no disk.
    fs.truncateSync(big, GIB)
    const started = await startEitri(['serve', '--http', '0', ...scratch.flags], LISTENING)
    server = started.child
    client = new Client({ name: 'eitri-faults-test', version: '1.0.0' })
    await client.connect(
      new StreamableHTTPClientTransport(new URL(started.match[1] as string), {
        requestInit: { headers: { authorization: `Bearer ${started.match[2] as string}` } },
      }),
    )
  })
  after(async () => {
    await client.close()
    await stop(server)
    await scratch.cleanup()
  })

  it('eight whole reads of a gibibyte at once are refused by size, and say how to read in parts', async () => {
    const answer = await evaluate(
      "await Promise.all(Array.from({ length: 8 }, () => fs.readFile('big.bin')))",
    )
    assert.equal(answer.code, 'eval_error')
    assert.match(answer.text, /\[file_too_large\]: big\.bin is 1073741824 bytes, over the/)
    assert.match(answer.text, /fs\.readRange\("big\.bin", \{ offset, length \}\)/)
    await healthy()
  })

  it('eight parts of 16 MiB read at once wait their turn within the byte budget', async () => {
    const answer = await evaluate(
      // Each part is dropped as it arrives: the guest's own heap limit is not what is tested.
      "const sizes = await Promise.all(Array.from({ length: 8 }, (_, i) => fs.readRange('big.bin', { offset: i * 16 * 1024 * 1024, encoding: 'base64' }).then((part) => part.bytes))); sizes.reduce((a, b) => a + b)",
      'parts',
    )
    assert.equal(answer.text, String(8 * 16 * 1024 * 1024))
    await healthy()
  })

  it('tools.call on the gibibyte, eight at a time, answers errors and holds nothing', async () => {
    const answer = await evaluate(
      "const results = await Promise.all([...Array.from({ length: 8 }, () => tools.call('read_file', { path: 'big.bin' })), ...Array.from({ length: 8 }, () => tools.call('edit_file', { path: 'big.bin', old_string: 'a', new_string: 'b' }))]); results.map((result) => result.code).join()",
      'tools',
    )
    assert.equal(answer.text, Array.from({ length: 16 }, () => 'file_too_large').join())
    await healthy()
  })

  it('a flood of shell output is kept to its limit', async () => {
    const answer = await evaluate(
      'const runs = await Promise.all(Array.from({ length: 4 }, () => shell.run(\'head -c 100000000 /dev/zero | tr "\\\\0" x\', { timeout_s: 120 }))); runs.map((run) => `${run.exitCode}:${run.stdout.length < 40000}`).join()',
      'shell',
    )
    assert.equal(answer.text, '0:true,0:true,0:true,0:true')
    await healthy()
  })
})
