/**
 * End to end through `eitri serve`: fork, write in the fork, main unchanged, merge with the
 * person's yes (elicitation), main changed; a conflict reported with nothing lost; --isolate.
 */
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { describe, it } from 'node:test'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { ElicitRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { EITRI_BIN, runEitri } from './helpers/eitri-process.ts'
import { makeScratch, type Scratch } from './helpers/scratch.ts'

async function connect(scratch: Scratch, args: string[] = []) {
  const prompts: string[] = []
  const client = new Client(
    { name: 'workspace-test', version: '1' },
    { capabilities: { elicitation: {} } },
  )
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    prompts.push(request.params.message)
    return { action: 'accept', content: { decision: 'approve' } }
  })
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [EITRI_BIN, 'serve', ...scratch.flags, ...args],
      stderr: 'pipe',
    }),
  )
  const call = async (name: string, input: Record<string, unknown>) => {
    const result = (await client.callTool({ name, arguments: input })) as CallToolResult
    return {
      isError: result.isError === true,
      text: result.content[0]?.type === 'text' ? result.content[0].text : '',
      structured: result.structuredContent as { code?: string; metadata: Record<string, unknown> },
    }
  }
  return { client, call, prompts }
}

const live = (scratch: Scratch, name: string) =>
  fs.readFile(path.join(scratch.workspace, name), 'utf8').catch(() => undefined)

describe('forks through eitri serve', () => {
  it('fork, write in the fork, main unchanged; merge with approval, main changed', async () => {
    await using scratch = await makeScratch({ 'a.txt': 'v1\n' })
    const { client, call, prompts } = await connect(scratch)
    try {
      const forked = await call('workspace_fork', { name: 'feature' })
      assert.equal(forked.isError, false, forked.text)
      assert.match(String(forked.structured.metadata['fork']), /^f-[0-9a-f]{8}$/)
      assert.equal((await call('workspace_use', { fork: 'feature' })).isError, false)
      assert.equal((await call('write_file', { path: 'a.txt', content: 'v2\n' })).isError, false)
      assert.equal((await call('shell', { command: 'echo from-shell > b.txt' })).isError, false)
      assert.equal(await live(scratch, 'a.txt'), 'v1\n')
      assert.equal(await live(scratch, 'b.txt'), undefined)
      const diff = await call('workspace_diff', { fork: 'feature' })
      assert.match(diff.text, /modified a\.txt/)
      assert.match(diff.text, /added\s+b\.txt/)
      const merged = await call('workspace_merge', { fork: 'feature' })
      assert.equal(merged.isError, false, merged.text)
      assert.match(prompts[0] ?? '', /merge feature into main \(your live folder\): 2 files/)
      assert.equal(await live(scratch, 'a.txt'), 'v2\n')
      assert.equal(await live(scratch, 'b.txt'), 'from-shell\n')
    } finally {
      await client.close()
    }
  })

  it('reports a conflict with both sides, and nothing is lost on either side', async () => {
    await using scratch = await makeScratch({ 'a.txt': 'base\n' })
    const { client, call } = await connect(scratch)
    try {
      await call('workspace_fork', { name: 'c' })
      await call('room_write', { fork: 'c', files: [{ path: 'a.txt', content: 'fork side\n' }] })
      await fs.writeFile(path.join(scratch.workspace, 'a.txt'), 'main side\n')
      const conflict = await call('workspace_merge', { fork: 'c' })
      assert.equal(conflict.isError, true)
      assert.equal(conflict.structured.code, 'merge_conflict')
      assert.match(conflict.text, /main side/)
      assert.match(conflict.text, /fork side/)
      assert.equal(await live(scratch, 'a.txt'), 'main side\n')
      assert.equal((await call('room_read', { path: 'a.txt', fork: 'c' })).text, 'fork side\n')
    } finally {
      await client.close()
    }
  })

  it('--isolate starts the connection on a fork: nothing reaches the folder until merged', async () => {
    await using scratch = await makeScratch({ 'a.txt': 'v1\n' })
    const { client, call } = await connect(scratch, ['--isolate'])
    try {
      const list = await call('workspace_list', {})
      assert.match(list.text, /^\s+main/m, 'main is not the current line')
      assert.match(list.text, /^\* f-/m)
      assert.match(
        list.text,
        /^\* f-\S+ \(workspace-test-1\) open, 0 file\(s\) changed, last active /m,
      )
      await call('write_file', { path: 'a.txt', content: 'agent\n' })
      assert.equal(await live(scratch, 'a.txt'), 'v1\n')
      const after = await call('workspace_list', {})
      assert.match(after.text, /\(workspace-test-1\) open, 1 file\(s\) changed, last active \d{4}-/)
      const side = await call('workspace_fork', { name: 'side' })
      assert.equal(side.isError, false, side.text)
      await call('workspace_discard', { fork: 'side' })
      assert.match(
        (await call('workspace_list', {})).text,
        /\(side\) discarded, 0 file\(s\) changed/,
      )
    } finally {
      await client.close()
    }
    const forks = JSON.parse((await runEitri(['forks', '--json', ...scratch.flags])).stdout) as {
      name?: string
      state: string
      changes: number
    }[]
    assert.deepEqual(
      forks.map((fork) => [fork.name, fork.state, fork.changes]),
      [
        ['workspace-test-1', 'open', 1],
        ['side', 'discarded', 0],
      ],
      'exactly one fork for the connection, named after its client (and the one it threw away)',
    )
  })

  it('a session whose fork a person discarded gets one clear not_found from every tool', async () => {
    await using scratch = await makeScratch({ 'a.txt': 'v1\n' })
    const { client, call } = await connect(scratch, ['--isolate'])
    try {
      assert.equal((await call('write_file', { path: 'b.txt', content: 'b\n' })).isError, false)
      const task = /t-[0-9a-f]+/.exec((await call('task_create', { title: 'before' })).text)?.[0]
      const known = await call('knowledge_add', { title: 'Before', body: 'the discard' })
      assert.equal(known.isError, false, known.text)
      const fork = /\* (f-[0-9a-f]{8})/.exec((await call('workspace_list', {})).text)?.[1] ?? ''
      const discarded = await runEitri(['discard', fork, ...scratch.flags])
      assert.equal(discarded.status, 0, discarded.stderr)
      const doors: [string, Record<string, unknown>][] = [
        ['write_file', { path: 'c.txt', content: 'c\n' }],
        ['read_file', { path: 'b.txt' }],
        ['shell', { command: 'ls' }],
        ['room_write', { files: [{ path: 'd.txt', content: 'd\n' }] }],
        // The line's tasks and knowledge are its records too.
        ['task_create', { title: 'after the discard' }],
        ['task_list', {}],
        ['task_update', { id: task, status: 'completed' }],
        ['knowledge_add', { title: 'Gone', body: 'after the discard' }],
        ['knowledge_search', { query: 'discard' }],
        ['knowledge_links', { title: 'Before' }],
      ]
      const expectGone = async (fate: RegExp) => {
        for (const [tool, input] of doors) {
          const result = await call(tool, input)
          assert.equal(result.structured.code, 'not_found', `${tool}: ${result.text}`)
          assert.match(result.text, new RegExp(`fork workspace-test-1 \\(${fork}\\) `), tool)
          assert.match(result.text, fate, tool)
          assert.match(
            result.text,
            /workspace_fork \{"from":"main"\}, then workspace_use it\), or on main \(workspace_use \{"fork":"main"\}/,
          )
        }
      }
      await expectGone(/was discarded at \d{4}-/)
      // The way on works: a new fork takes writes again.
      const made = await call('workspace_fork', { from: 'main', name: 'next' })
      assert.equal(made.isError, false, made.text)
      assert.equal((await call('workspace_use', { fork: 'next' })).isError, false)
      const again = await call('write_file', { path: 'c.txt', content: 'c\n' })
      assert.equal(again.isError, false, again.text)
    } finally {
      await client.close()
    }
    assert.equal(await live(scratch, 'c.txt'), undefined)
  })

  it('--isolate reaches main only with the person’s yes, given through the client', async () => {
    await using scratch = await makeScratch({ 'a.txt': 'v1\n', 'b.txt': 'b\n' })
    const { client, call, prompts } = await connect(scratch, ['--isolate'])
    try {
      const written = await call('room_write', {
        fork: 'main',
        files: [{ path: 'a.txt', content: 'approved\n' }],
      })
      assert.equal(written.isError, false, written.text)
      assert.match(prompts[0] ?? '', /write 1 file: a\.txt into main/)
      assert.equal(await live(scratch, 'a.txt'), 'approved\n')
    } finally {
      await client.close()
    }
  })

  it('--isolate: diff, review and merge with no fork named act on the connection’s own fork', async () => {
    await using scratch = await makeScratch({ 'a.txt': 'v1\n' })
    const { client, call, prompts } = await connect(scratch, ['--isolate'])
    try {
      await call('write_file', { path: 'a.txt', content: 'v2\n' })
      const diff = await call('workspace_diff', {})
      assert.equal(diff.isError, false, diff.text)
      assert.match(diff.text, /modified a\.txt/)
      const review = await call('workspace_review', {})
      assert.match(review.text, /^Tier: reviewable/)
      const merged = await call('workspace_merge', {})
      assert.equal(merged.isError, false, merged.text)
      assert.match(merged.text, /^Merged workspace-test-1 into main: 1 file\(s\): a\.txt/)
      assert.match(prompts[0] ?? '', /merge workspace-test-1 into main/)
      assert.equal(await live(scratch, 'a.txt'), 'v2\n')
    } finally {
      await client.close()
    }
  })

  it('on main, a merge with no fork named says to name one', async () => {
    await using scratch = await makeScratch({ 'a.txt': 'v1\n' })
    const { client, call } = await connect(scratch)
    try {
      const refused = await call('workspace_merge', {})
      assert.equal(refused.structured.code, 'invalid_input')
      assert.match(refused.text, /works on main, so name the fork/)
    } finally {
      await client.close()
    }
  })

  it('a stdio connection without --isolate is the person’s own client: it sees every fork', async () => {
    await using scratch = await makeScratch({ 'a.txt': 'v1\n' })
    assert.equal((await runEitri(['fork', 'from-cli', ...scratch.flags])).status, 0)
    const own = await connect(scratch)
    try {
      assert.match((await own.call('workspace_list', {})).text, /from-cli/)
      assert.equal((await own.call('room_read', { fork: 'from-cli', path: 'a.txt' })).text, 'v1\n')
    } finally {
      await own.client.close()
    }
    // The control: an isolated connection on the same workspace sees none of it.
    const isolated = await connect(scratch, ['--isolate'])
    try {
      assert.doesNotMatch((await isolated.call('workspace_list', {})).text, /from-cli/)
      const refused = await isolated.call('room_read', { fork: 'from-cli', path: 'a.txt' })
      assert.equal(refused.structured.code, 'not_found')
    } finally {
      await isolated.client.close()
    }
  })
})
