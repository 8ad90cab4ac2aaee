/**
 * End to end: a Run hired over `eitri serve --http` whose automatic settlement merges into main
 * asks the person after `agent_hire` has answered, by an elicitation on the connection's
 * standalone stream, with the MCP SDK's own client answering; a client that cannot show prompts
 * leaves the Run in review with `approval-unavailable`. The model is a fake API on loopback.
 */
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { describe, it } from 'node:test'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { ElicitRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { startEitri, stop } from './helpers/eitri-process.ts'
import { runsOf, writeModelConfig } from './helpers/llm-cli-setup.ts'
import { startModelWireServer, type WireReply } from './helpers/model-wire-server.ts'
import { makeScratch } from './helpers/scratch.ts'

/** The URL and the token `eitri serve --http` prints. */
const LISTENING_WITH_TOKEN =
  /listening on (http:\/\/\S+\/mcp)\n.*"Authorization: Bearer ([A-Za-z0-9_-]+)"/

const WRITE: WireReply = {
  kind: 'tool-call',
  name: 'write_file',
  input: { path: 'hello.txt', content: 'hello from a Run\n' },
}

/** How the client answers a prompt, or `none` for a client without elicitation. */
type Answer = 'accept' | 'decline' | 'none'

/**
 * Hires the model agent `writer` over HTTP with settlement automatic; its model answers its
 * last step only once agent_hire has answered, so the question comes outside any request.
 */
async function hireOverHttp(answer: Answer) {
  const hireAnswered = Promise.withResolvers<void>()
  let answered = false
  await using model = await startModelWireServer((_request, index) =>
    index === 0
      ? WRITE
      : hireAnswered.promise.then((): WireReply => ({ kind: 'text', text: 'I wrote hello.txt.' })),
  )
  await using scratch = await makeScratch()
  const { flags, url } = await writeModelConfig(scratch, model.openaiURL)
  const started = await startEitri(['serve', ...flags, '--http', '0'], LISTENING_WITH_TOKEN)
  const prompts: { message: string; afterHire: boolean }[] = []
  try {
    const client = new Client(
      { name: 'http-approval-client', version: '1.0.0' },
      { capabilities: answer === 'none' ? {} : { elicitation: {} } },
    )
    if (answer !== 'none') {
      client.setRequestHandler(ElicitRequestSchema, async (request) => {
        prompts.push({ message: request.params.message, afterHire: answered })
        return answer === 'accept'
          ? { action: 'accept', content: { decision: 'approve' } }
          : { action: 'decline' }
      })
    }
    await client.connect(
      new StreamableHTTPClientTransport(new URL(started.match[1] as string), {
        requestInit: { headers: { authorization: `Bearer ${started.match[2] as string}` } },
      }),
    )
    try {
      const hire = (await client.callTool({
        name: 'agent_hire',
        arguments: { agent: 'writer', task: 'write hello.txt', settlement: 'automatic' },
      })) as CallToolResult
      assert.notEqual(hire.isError, true, JSON.stringify(hire))
      const id = (hire.structuredContent as { metadata: { id: string } }).metadata.id
      answered = true
      hireAnswered.resolve()
      const awaited = (await client.callTool({
        name: 'run_await',
        arguments: { id, wait_s: 45 },
      })) as CallToolResult
      assert.notEqual(awaited.isError, true, JSON.stringify(awaited))
    } finally {
      await client.close()
    }
  } finally {
    await stop(started.child)
  }
  const [run] = await runsOf(url)
  const inMain = await fs
    .readFile(path.join(scratch.workspace, 'hello.txt'), 'utf8')
    .then(() => true)
    .catch(() => false)
  return { prompts, run, inMain, stderr: started.stderr() }
}

describe("a hired Run's merge into main over eitri serve --http", () => {
  it('asks the client by elicitation after agent_hire answered, and merges when the person accepts', async () => {
    const { prompts, run, inMain, stderr } = await hireOverHttp('accept')
    assert.equal(prompts.length, 1, stderr)
    assert.equal(prompts[0]?.afterHire, true)
    assert.match(prompts[0]?.message ?? '', /into main .*hello\.txt/)
    assert.deepEqual(
      [run?.status, run?.settlementStatus, run?.settlementReason],
      ['completed', 'merged', 'automatic'],
    )
    assert.equal(inMain, true)
  })

  it('keeps the Run for review with approval-refused when the person declines', async () => {
    const { prompts, run, inMain } = await hireOverHttp('decline')
    assert.equal(prompts.length, 1)
    assert.equal(run?.settlementStatus, 'review')
    assert.match(run?.settlementReason ?? '', /^approval-refused: a person did not approve it/)
    assert.equal(inMain, false)
  })

  it('keeps the Run for review with approval-unavailable when the client cannot show prompts', async () => {
    const { prompts, run, inMain } = await hireOverHttp('none')
    assert.equal(prompts.length, 0)
    assert.equal(run?.settlementStatus, 'review')
    assert.match(
      run?.settlementReason ?? '',
      /^approval-unavailable: no person could be asked \(http-approval-client cannot show approval prompts/,
    )
    assert.equal(inMain, false)
  })
})
