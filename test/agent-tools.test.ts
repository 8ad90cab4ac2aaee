/**
 * The agent tools through a real workshop over a real SQLite store, with the configuration's
 * roster and a roster file in the workspace: `agent_hire` answers at once, `run_await` waits
 * and answers the settled Run, `run_cancel` and `run_settle` act only on the session's own
 * Runs, bad input names the field; and the whole loop over MCP from `eitri serve`, with the
 * progress notifications `run_await` sends while it waits.
 */
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { describe, it } from 'node:test'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import {
  getDefaultEnvironment,
  StdioClientTransport,
} from '@modelcontextprotocol/sdk/client/stdio.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import type { ToolResult } from '../src/tool/tool-result.ts'
import { openWorkshop, type Workshop } from '../src/workshop/workshop.ts'
import { EITRI_BIN } from './helpers/eitri-process.ts'
import { makeScratch, type Scratch } from './helpers/scratch.ts'

const AGENTS = [
  { id: 'echo', name: 'Echo', prompt: 'Say the task back.', program: { kind: 'echo' } },
  {
    id: 'fast',
    name: 'Fast',
    prompt: 'Answer quickly.',
    program: { kind: 'scripted', delayMs: 10, reply: 'fast answer' },
  },
  {
    id: 'slow',
    name: 'Slow',
    prompt: 'Take your time.',
    program: { kind: 'scripted', delayMs: 30_000, reply: 'slow answer' },
  },
  {
    id: 'shell-user',
    name: 'Needs a tool',
    prompt: 'Runs commands.',
    tools: ['shell'],
    program: { kind: 'echo' },
  },
]

async function scratchWithAgents(): Promise<Scratch> {
  const scratch = await makeScratch({
    'team.json': JSON.stringify({
      agents: [{ id: 'writer', name: 'Writer', prompt: 'p', program: { kind: 'echo' } }],
    }),
    'typo.json': JSON.stringify({
      agents: [{ id: 'bad', name: 'Bad', prompt: 'p', program: { kind: 'scripted', repy: 'x' } }],
    }),
    'broken.json': '{"agents": [',
  })
  await fs.writeFile(scratch.configPath, JSON.stringify({ agents: AGENTS }))
  return scratch
}

function open(scratch: Scratch, tools?: readonly string[]): Promise<Workshop> {
  return openWorkshop({
    workspace: scratch.workspace,
    stateDir: scratch.stateDir,
    configPath: scratch.configPath,
    ...(tools === undefined ? {} : { tools }),
  })
}

function ok(result: ToolResult): ToolResult {
  assert.equal(result.type, 'success', result.content)
  return result
}

function failure(result: ToolResult, code: string): string {
  assert.equal(result.type, 'error', result.content)
  assert.equal(result.type === 'error' && result.code, code, result.content)
  return result.content
}

describe('agent_hire, run_await, run_cancel and run_settle', () => {
  it('hires from the configuration and a roster file, and awaits the settled result', async () => {
    await using scratch = await scratchWithAgents()
    await using workshop = await open(scratch)
    const hired = ok(await workshop.call('agent_hire', { agent: 'echo', task: 'hello there' }))
    const id = hired.metadata['id'] as string
    assert.match(id, /^[0-9a-f-]{36}$/)
    const awaited = ok(await workshop.call('run_await', { id, wait_s: 20 }))
    assert.equal(awaited.metadata['settled'], true)
    assert.equal(awaited.metadata['status'], 'completed')
    assert.equal(awaited.metadata['output'], 'hello there')
    assert.equal(awaited.metadata['agentId'], 'echo')
    assert.equal(awaited.metadata['settlementStatus'], 'merged')
    assert.match(awaited.content, /Output: hello there/)

    const fromFile = ok(
      await workshop.call('agent_hire', { agent: 'writer', task: 't', roster: 'team.json' }),
    )
    const row = ok(
      await workshop.call('run_await', { id: fromFile.metadata['id'] as string, wait_s: 20 }),
    )
    assert.equal(row.metadata['agentId'], 'writer')
    assert.equal(row.metadata['status'], 'completed')
  })

  it('waits a bounded time, cancels, and keeps review Runs for run_settle', async () => {
    await using scratch = await scratchWithAgents()
    await using workshop = await open(scratch)
    const slow = ok(await workshop.call('agent_hire', { agent: 'slow', task: 'x' })).metadata[
      'id'
    ] as string
    const waited = ok(await workshop.call('run_await', { id: slow, wait_s: 0.2 }))
    assert.equal(waited.metadata['settled'], false)
    assert.equal(waited.metadata['status'], 'running')
    assert.match(waited.content, /still running after 0\.2 s; call run_await again/)
    assert.match(waited.content, /run_cancel to stop it/, 'its owner is told it can cancel')
    const cancelled = ok(await workshop.call('run_cancel', { id: slow }))
    assert.equal(cancelled.metadata['cancelled'], true)
    assert.equal(cancelled.metadata['status'], 'cancelled')
    assert.equal(cancelled.metadata['settlementStatus'], 'discarded')
    const again = ok(await workshop.call('run_cancel', { id: slow }))
    assert.equal(again.metadata['cancelled'], false)
    assert.match(again.content, /had already ended/)

    const review = ok(
      await workshop.call('agent_hire', { agent: 'echo', task: 'r', settlement: 'review' }),
    ).metadata['id'] as string
    const kept = ok(await workshop.call('run_await', { id: review, wait_s: 20 }))
    assert.equal(kept.metadata['settlementStatus'], 'review')
    assert.match(kept.content, /run_settle/)
    const merged = ok(await workshop.call('run_settle', { id: review, action: 'merge' }))
    assert.equal(merged.metadata['settlementStatus'], 'merged')
    assert.equal(merged.metadata['settlementReason'], 'merged-after-review')
    assert.match(
      failure(await workshop.call('run_settle', { id: review, action: 'discard' }), 'conflict'),
      /settles once/,
    )
  })

  it('lets a session act only on its own Runs; any session may await any Run', async () => {
    await using scratch = await scratchWithAgents()
    await using workshop = await open(scratch)
    const mine = ok(await workshop.call('agent_hire', { agent: 'slow', task: 'x' })).metadata[
      'id'
    ] as string
    await using other = await workshop.openSession()
    const call = (name: string, input: unknown) =>
      workshop.toolset.run({ name, input }, other.context())
    // Positive control: the owner's session can cancel; first show the other cannot.
    assert.match(
      failure(await call('run_cancel', { id: mine }), 'permission_denied'),
      /hired by another session or process/,
    )
    assert.match(
      failure(await call('run_settle', { id: mine, action: 'discard' }), 'permission_denied'),
      /only the Runs it hired/,
    )
    const observed = ok(await call('run_await', { id: mine, wait_s: 0.1 }))
    assert.equal(observed.metadata['status'], 'running')
    // Told what it can do, not the run_cancel it would be refused.
    assert.doesNotMatch(observed.content, /run_cancel/)
    assert.match(observed.content, /only the session or process that hired it can stop it/)
    assert.match(observed.content, new RegExp(`eitri runs cancel ${mine}`))
    assert.equal(ok(await workshop.call('run_cancel', { id: mine })).metadata['cancelled'], true)
    // A Run kept for review: only its hirer is told to settle it.
    const review = ok(
      await workshop.call('agent_hire', { agent: 'echo', task: 'r', settlement: 'review' }),
    ).metadata['id'] as string
    const seen = ok(await call('run_await', { id: review, wait_s: 20 }))
    assert.equal(seen.metadata['settlementStatus'], 'review')
    assert.doesNotMatch(seen.content, /run_settle/)
    assert.match(seen.content, new RegExp(`eitri runs merge\\|discard ${review}`))
    assert.match(
      ok(await workshop.call('run_await', { id: review, wait_s: 1 })).content,
      /run_settle/,
    )
    assert.match(
      failure(await call('run_cancel', { id: 'no-such-run' }), 'not_found'),
      /run_list shows/,
    )
  })

  it('uses a Run only from the line it was hired on', async () => {
    await using scratch = await scratchWithAgents()
    await using workshop = await open(scratch)
    const id = ok(await workshop.call('agent_hire', { agent: 'slow', task: 'x' })).metadata[
      'id'
    ] as string
    ok(await workshop.call('workspace_fork', { name: 'elsewhere' }))
    ok(await workshop.call('workspace_use', { fork: 'elsewhere' }))
    assert.match(
      failure(await workshop.call('run_cancel', { id }), 'permission_denied'),
      /hired from the line main.*switch back to main/,
    )
    ok(await workshop.call('workspace_use', { fork: 'main' }))
    const onFork = ok(await workshop.call('agent_hire', { agent: 'slow', task: 'y' }))
    ok(await workshop.call('workspace_use', { fork: 'elsewhere' }))
    ok(await workshop.call('workspace_use', { fork: 'main' }))
    assert.equal(ok(await workshop.call('run_cancel', { id })).metadata['cancelled'], true)
    ok(await workshop.call('workspace_use', { fork: 'elsewhere' }))
    const forkRun = ok(await workshop.call('agent_hire', { agent: 'slow', task: 'z' }))
    ok(await workshop.call('workspace_use', { fork: 'main' }))
    assert.match(
      failure(
        await workshop.call('run_cancel', { id: forkRun.metadata['id'] as string }),
        'permission_denied',
      ),
      /hired from the line elsewhere, and this session now works on main; switch back to elsewhere/,
    )
    ok(await workshop.call('run_cancel', { id: onFork.metadata['id'] as string }))
  })

  it('cancels a fork’s Runs before discarding it, and a session’s Runs when it closes', async () => {
    await using scratch = await scratchWithAgents()
    await using workshop = await open(scratch)
    ok(await workshop.call('workspace_fork', { name: 'elsewhere' }))
    ok(await workshop.call('workspace_use', { fork: 'elsewhere' }))
    const onFork = ok(await workshop.call('agent_hire', { agent: 'slow', task: 'x' })).metadata[
      'id'
    ] as string
    // Positive control: a Run hired from main goes on when another line is discarded.
    ok(await workshop.call('workspace_use', { fork: 'main' }))
    const onMain = ok(await workshop.call('agent_hire', { agent: 'slow', task: 'y' })).metadata[
      'id'
    ] as string
    ok(await workshop.call('workspace_discard', { fork: 'elsewhere' }))
    const gone = ok(await workshop.call('run_observe', { id: onFork })).metadata
    assert.deepEqual(
      [gone['status'], gone['settlementStatus'], gone['settlementReason']],
      ['cancelled', 'discarded', 'cancelled'],
    )
    const events = ok(await workshop.call('run_observe', { id: onFork })).content
    assert.match(events, /cancel-requested[\s\S]*finished \{"status":"cancelled"\}/)
    assert.equal(
      ok(await workshop.call('run_observe', { id: onMain })).metadata['status'],
      'running',
    )
    // A Run kept for review is not cancelled: the refusal says how to settle it.
    ok(await workshop.call('workspace_fork', { name: 'kept' }))
    ok(await workshop.call('workspace_use', { fork: 'kept' }))
    const review = ok(
      await workshop.call('agent_hire', { agent: 'echo', task: 'r', settlement: 'review' }),
    ).metadata['id'] as string
    assert.equal(
      ok(await workshop.call('run_await', { id: review, wait_s: 20 })).metadata['settlementStatus'],
      'review',
    )
    ok(await workshop.call('workspace_use', { fork: 'main' }))
    assert.match(
      failure(await workshop.call('workspace_discard', { fork: 'kept' }), 'invalid_input'),
      new RegExp(`Runs work or wait for review in one \\(${review}\\).*run_settle`),
    )

    const other = await workshop.openSession()
    const hired = await workshop.toolset.run(
      { name: 'agent_hire', input: { agent: 'slow', task: 'z' } },
      other.context(),
    )
    const ofOther = ok(hired).metadata['id'] as string
    await other.close()
    const closed = ok(await workshop.call('run_observe', { id: ofOther })).metadata
    assert.deepEqual([closed['status'], closed['settlementStatus']], ['cancelled', 'discarded'])
    assert.equal(ok(await workshop.call('run_cancel', { id: onMain })).metadata['cancelled'], true)
  })

  it('cancels no Run when the discard is refused for another fork below the line', async () => {
    await using scratch = await scratchWithAgents()
    await using workshop = await open(scratch)
    ok(await workshop.call('workspace_fork', { name: 'line' }))
    ok(await workshop.call('workspace_use', { fork: 'line' }))
    const run = ok(await workshop.call('agent_hire', { agent: 'slow', task: 'x' })).metadata[
      'id'
    ] as string
    ok(await workshop.call('workspace_fork', { name: 'below', from: 'line' }))
    assert.match(
      failure(await workshop.call('workspace_discard', { fork: 'line' }), 'invalid_input'),
      /below/,
    )
    const kept = ok(await workshop.call('run_observe', { id: run })).metadata
    assert.deepEqual([kept['status'], kept['settlementStatus']], ['running', 'open'])
    // Positive control: with the other fork gone, the discard cancels the Run and goes.
    ok(await workshop.call('workspace_discard', { fork: 'below' }))
    ok(await workshop.call('workspace_discard', { fork: 'line' }))
    const gone = ok(await workshop.call('run_observe', { id: run })).metadata
    assert.deepEqual([gone['status'], gone['settlementStatus']], ['cancelled', 'discarded'])
  })

  it('keeps a Run’s world out of the line tools: read it, settle it through the Run', async () => {
    await using scratch = await scratchWithAgents()
    await using workshop = await open(scratch)
    const id = ok(
      await workshop.call('agent_hire', { agent: 'echo', task: 'r', settlement: 'review' }),
    ).metadata['id'] as string
    const world = ok(await workshop.call('run_await', { id, wait_s: 20 })).metadata[
      'world'
    ] as string
    assert.equal(world, `run-${id}`)
    // Positive control: reading the world is allowed, and an ordinary fork is usable.
    ok(await workshop.call('workspace_review', { fork: world }))
    ok(await workshop.call('workspace_diff', { fork: world }))
    ok(await workshop.call('workspace_fork', { name: 'mine', from: world }))
    const refusals = [
      ['workspace_use', { fork: world }],
      ['workspace_discard', { fork: world }],
      ['workspace_merge', { fork: world }],
      ['room_write', { fork: world, files: [{ path: 'planted.txt', content: 'x' }] }],
      ['workspace_merge', { fork: 'mine' }],
    ] as const
    for (const [tool, input] of refusals) {
      assert.match(
        failure(await workshop.call(tool, input), 'permission_denied'),
        new RegExp(`world of Run ${id}.*run_settle`),
        tool,
      )
    }
    const settled = ok(await workshop.call('run_settle', { id, action: 'discard' }))
    assert.equal(settled.metadata['settlementStatus'], 'discarded')
  })

  it('counts hires sent at once against runs.maxActive', async () => {
    await using scratch = await scratchWithAgents()
    await fs.writeFile(
      scratch.configPath,
      JSON.stringify({ agents: AGENTS, runs: { maxActive: 3 } }),
    )
    await using workshop = await open(scratch)
    const results = await Promise.all(
      Array.from({ length: 10 }, (_, index) =>
        workshop.call('agent_hire', { agent: 'slow', task: `t${index}` }),
      ),
    )
    assert.equal(results.filter((result) => result.type === 'success').length, 3)
    for (const result of results.filter((result) => result.type === 'error')) {
      failure(result, 'limit_exceeded')
    }
    const running = ok(await workshop.call('run_list', { status: 'running' }))
    assert.equal(running.metadata['count'], 3)
  })

  it('refuses bad hires naming the field, and admits nothing', async () => {
    await using scratch = await scratchWithAgents()
    // The caller holds no shell: an agent that needs it is past the ceiling.
    await using workshop = await open(scratch, ['agent_hire', 'run_await', 'run_list', 'read_file'])
    assert.match(
      failure(await workshop.call('agent_hire', { task: 'x' }), 'invalid_input'),
      /agent/,
    )
    assert.match(
      failure(await workshop.call('agent_hire', { agent: 'nobody', task: 'x' }), 'not_found'),
      /nobody/,
    )
    assert.match(
      failure(
        await workshop.call('agent_hire', { agent: 'shell-user', task: 'x' }),
        'permission_denied',
      ),
      /shell/,
    )
    assert.match(
      failure(
        await workshop.call('agent_hire', { agent: 'echo', task: 'x', settlement: 'merge' }),
        'invalid_input',
      ),
      /settlement/,
    )
    assert.match(
      failure(
        await workshop.call('agent_hire', { agent: 'bad', task: 'x', roster: 'typo.json' }),
        'invalid_input',
      ),
      /typo\.json.*repy|repy.*typo\.json/s,
    )
    assert.match(
      failure(
        await workshop.call('agent_hire', { agent: 'x', task: 'x', roster: 'broken.json' }),
        'invalid_input',
      ),
      /broken\.json is not valid JSON/,
    )
    assert.equal(
      failure(
        await workshop.call('agent_hire', { agent: 'x', task: 'x', roster: 'missing.json' }),
        'not_found',
      ).length > 0,
      true,
    )
    // One wait stays well inside a client's request timeout: at most 45 s.
    assert.match(
      failure(await workshop.call('run_await', { id: 'any', wait_s: 46 }), 'invalid_input'),
      /wait_s/,
    )
    assert.equal(ok(await workshop.call('run_list', {})).content, 'No Runs.')
  })

  it('bounds a session’s running Runs and a task’s size, and reads rosters only inside the workspace', async () => {
    await using scratch = await scratchWithAgents()
    await fs.writeFile(
      scratch.configPath,
      JSON.stringify({ agents: AGENTS, runs: { maxActive: 2 } }),
    )
    await fs.writeFile(path.join(scratch.root, 'outside.json'), JSON.stringify({ agents: AGENTS }))
    await fs.symlink(
      path.join(scratch.root, 'outside.json'),
      path.join(scratch.workspace, 'link.json'),
    )
    await using workshop = await open(scratch)
    const first = ok(await workshop.call('agent_hire', { agent: 'slow', task: '1' }))
    ok(await workshop.call('agent_hire', { agent: 'slow', task: '2' }))
    assert.match(
      failure(await workshop.call('agent_hire', { agent: 'slow', task: '3' }), 'limit_exceeded'),
      /already has 2 Runs running.*runs\.maxActive/,
    )
    // Positive control: once one ends, the session may hire again.
    ok(await workshop.call('run_cancel', { id: first.metadata['id'] as string }))
    const third = ok(await workshop.call('agent_hire', { agent: 'echo', task: 'x'.repeat(1000) }))
    assert.equal(
      ok(await workshop.call('run_await', { id: third.metadata['id'] as string })).metadata[
        'status'
      ],
      'completed',
    )
    assert.match(
      failure(
        await workshop.call('agent_hire', { agent: 'echo', task: 'x'.repeat(1024 * 1024 + 1) }),
        'invalid_input',
      ),
      /task is over 1 MiB/,
    )
    for (const roster of [
      '../outside.json',
      path.join(scratch.root, 'outside.json'),
      'link.json',
    ]) {
      const result = await workshop.call('agent_hire', { agent: 'echo', task: 'x', roster })
      assert.equal(result.type, 'error', roster)
      assert.equal(result.type === 'error' && result.code, 'path_outside_workspace', roster)
    }
  })

  it('runs the loop over MCP from eitri serve, with progress while run_await waits', async () => {
    await using scratch = await scratchWithAgents()
    const client = new Client({ name: 'eitri-agent-tools-test', version: '1.0.0' })
    await client.connect(
      new StdioClientTransport({
        command: process.execPath,
        args: [EITRI_BIN, 'serve', ...scratch.flags],
        env: getDefaultEnvironment(),
        stderr: 'pipe',
      }),
    )
    try {
      const call = async (name: string, args: Record<string, unknown>, onprogress?: () => void) =>
        (await client.callTool(
          { name, arguments: args },
          undefined,
          onprogress === undefined ? {} : { onprogress, timeout: 60_000 },
        )) as CallToolResult
      const meta = (result: CallToolResult) =>
        (result.structuredContent as { metadata: Record<string, unknown> }).metadata
      const fast = meta(await call('agent_hire', { agent: 'fast', task: 'a' }))['id'] as string
      const slow = meta(await call('agent_hire', { agent: 'slow', task: 'b' }))['id'] as string
      let progress = 0
      const waiting = await call('run_await', { id: slow, wait_s: 2.5 }, () => void progress++)
      assert.equal(waiting.isError, false)
      assert.equal(meta(waiting)['status'], 'running')
      assert.ok(progress >= 1, 'run_await sent progress notifications while waiting')
      const done = await call('run_await', { id: fast, wait_s: 20 })
      assert.equal(meta(done)['status'], 'completed')
      assert.equal(meta(done)['output'], 'fast answer')
      const cancelled = await call('run_cancel', { id: slow })
      assert.equal(meta(cancelled)['status'], 'cancelled')
      const listed = await call('run_list', { status: 'running' })
      assert.equal(meta(listed)['count'], 0)
    } finally {
      await client.close()
    }
  })
})
