/**
 * workspace_restore through `eitri serve` and the SDK's own client: it goes through the
 * person's approval (MCP elicitation), and without a person it is refused with the reason.
 */
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { describe, it } from 'node:test'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import { makeScratch, type Scratch } from './helpers/scratch.ts'
import { connectServe } from './helpers/serve-client.ts'

async function connect(scratch: Scratch, elicitation: boolean) {
  const prompts: string[] = []
  const answers: string[] = []
  const client = new Client(
    { name: 'restore-test-client', version: '1.0.0' },
    { capabilities: elicitation ? { elicitation: {} } : {} },
  )
  if (elicitation)
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      prompts.push(request.params.message)
      return { action: 'accept', content: { decision: answers.shift() ?? 'deny' } }
    })
  const call = await connectServe(client, scratch)
  return { client, prompts, answers, call }
}

/** Deletes src in the jail, and answers the number of the snapshot taken before. */
async function deleteSource(call: Awaited<ReturnType<typeof connect>>['call']): Promise<number> {
  const removed = await call('shell', {
    command: `python3 -c 'import shutil; shutil.rmtree("src")'`,
  })
  assert.equal(removed.isError, false, removed.text)
  const listed = await call('workspace_snapshots', {})
  assert.match(listed.text, /^#\d+ {2}\S+ {2}before shell: python3 -c/m)
  const [newest] = listed.metadata.snapshots as { id: number; kind: string }[]
  assert.equal(newest?.kind, 'before')
  return newest.id
}

describe('workspace_restore over MCP', () => {
  it('asks the person; denied changes nothing, approved puts the files back', async () => {
    await using scratch = await makeScratch({ 'src/a.ts': 'export const a = 1\n' })
    const { client, prompts, answers, call } = await connect(scratch, true)
    try {
      const snapshot = await deleteSource(call)
      answers.push('deny')
      const denied = await call('workspace_restore', { snapshot })
      assert.deepEqual([denied.isError, denied.code], [true, 'permission_denied'])
      await assert.rejects(fs.access(path.join(scratch.workspace, 'src/a.ts')))
      assert.match(prompts[0] ?? '', new RegExp(`restore snapshot #${snapshot} .*before shell`))
      answers.push('approve')
      const approved = await call('workspace_restore', { snapshot })
      assert.equal(approved.isError, false, approved.text)
      assert.match(
        approved.text,
        new RegExp(`^Restored snapshot #${snapshot}: 1 file\\(s\\): src/a\\.ts\\.`),
      )
      assert.equal(
        await fs.readFile(path.join(scratch.workspace, 'src/a.ts'), 'utf8'),
        'export const a = 1\n',
      )
    } finally {
      await client.close()
    }
  })

  it('without a person to ask it is refused with the reason and the command to run instead', async () => {
    await using scratch = await makeScratch({ 'src/a.ts': 'export const a = 1\n' })
    const { client, call } = await connect(scratch, false)
    try {
      const snapshot = await deleteSource(call)
      const refused = await call('workspace_restore', { snapshot })
      assert.deepEqual([refused.isError, refused.code], [true, 'permission_denied'])
      assert.match(refused.text, /does not support MCP elicitation/)
      assert.match(refused.text, new RegExp(`eitri restore ${snapshot}$`))
      await assert.rejects(fs.access(path.join(scratch.workspace, 'src/a.ts')))
    } finally {
      await client.close()
    }
  })
})
