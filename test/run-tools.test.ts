/**
 * A Run's own tools, through a real workshop (real git history, real bubblewrap, real SQLite
 * store, the real isolated-vm sandbox): a test program hired like any agent makes tool calls
 * through `context.tools`, and each lands where the Run's authority says: in its world, never
 * main; only its definition's tools; at its access; no other line; children of the Run; and
 * what its calls left running ends with it.
 */
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import fs from 'node:fs/promises'
import path from 'node:path'
import { describe, it } from 'node:test'
import type { Approver } from '../src/access/approval.ts'
import { DETERMINISTIC_PROGRAMS } from '../src/agent/deterministic-programs.ts'
import type { Program, ProgramFactory } from '../src/agent/program.ts'
import type { EngineSession, EvalEngine } from '../src/eval/eval-engine.ts'
import { IsolateEngine } from '../src/eval/host/isolate-engine.ts'
import type { RunOutcome } from '../src/ports/agent-runs.ts'
import type { ToolCall } from '../src/tool/toolset.ts'
import { openWorkshop, type Workshop, type WorkshopSession } from '../src/workshop/workshop.ts'
import { hireOne } from './helpers/hire-one.ts'
import { makeScratch, type Scratch } from './helpers/scratch.ts'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js'
import { ElicitRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import type { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { createMcpServer } from '../src/mcp/create-mcp-server.ts'
import { elicitationApprover } from '../src/mcp/elicitation-approver.ts'

/** What the steps program answers: the tools it was offered and each call's result. */
interface StepsValue {
  readonly offered: string[]
  readonly results: { type: string; code?: string; content: string }[]
}

/** Awaited between the calls of a task that asks to `pause`: the test looks meanwhile. */
let gate: (() => Promise<void>) | undefined

/** A program that makes the calls its task lists, through its Run's tools. */
const steps: Program = {
  async run(context) {
    // Over MCP a task is a string: the same calls, as JSON.
    const task = (typeof context.task === 'string' ? JSON.parse(context.task) : context.task) as {
      calls: ToolCall[]
      pause?: boolean
    }
    const offered = (await context.tools.offered()).map((tool) => tool.name)
    const results: StepsValue['results'] = []
    for (const step of task.calls) {
      // `$world` in a call stands for the Run's own world.
      const input = JSON.parse(JSON.stringify(step.input).replaceAll('$world', context.world))
      const result = await context.tools.call({ ...step, input }, { signal: context.signal })
      results.push({
        type: result.type,
        ...(result.type === 'error' ? { code: result.code } : {}),
        content: result.content,
      })
    }
    if (task.pause === true) await gate?.()
    return { status: 'completed', value: { offered, results } }
  },
}

/** `scripted` agents marked `steps` run {@link steps}; the others run eitri's own. */
const programs: ProgramFactory = (def, hire) =>
  def.metadata['program'] === 'steps'
    ? steps
    : (DETERMINISTIC_PROGRAMS['scripted'] as ProgramFactory)(def, hire)

/** A definition of a steps agent with these tools and access. */
function agent(id: string, tools: readonly string[], access = 'workspace-write') {
  return { id, program: { kind: 'scripted' }, tools, access, metadata: { program: 'steps' } }
}

const approveAll: Approver = async () => ({ type: 'approved', by: 'test' })

/** The eval sessions alive in the workshop's engine, by id. */
const liveEvalSessions = new Set<string>()

/** The real engine, counting the sessions it holds. */
function countingEngine(): EvalEngine {
  const engine = new IsolateEngine()
  return {
    name: engine.name,
    capabilities: engine.capabilities,
    async createSession(options) {
      const session = await engine.createSession(options)
      liveEvalSessions.add(session.id)
      const dispose = async (): Promise<void> => {
        liveEvalSessions.delete(session.id)
        await session.dispose()
      }
      const counted: EngineSession = {
        get id() {
          return session.id
        },
        get lost() {
          return session.lost
        },
        eval: (code, evalOptions) => session.eval(code, evalOptions),
        dispose,
        [Symbol.asyncDispose]: dispose,
      }
      return counted
    },
    close: () => engine.close(),
    [Symbol.asyncDispose]: () => engine.close(),
  }
}

async function open(scratch: Scratch): Promise<Workshop> {
  return openWorkshop({
    workspace: scratch.workspace,
    stateDir: scratch.stateDir,
    configPath: scratch.configPath,
    programs: { scripted: programs },
    evaluation: { engine: countingEngine },
  })
}

/** Hires `def` from `session` with `task` and waits for it: it must complete. */
async function runOf(
  session: WorkshopSession,
  def: ReturnType<typeof agent>,
  task: unknown,
  settlement = 'review',
): Promise<{ id: string; outcome: RunOutcome; value: StepsValue }> {
  const { id, outcome } = await hireOne(session, def, task, settlement)
  assert.equal(outcome.status, 'completed', JSON.stringify(outcome))
  return { id, outcome, value: outcome.value as StepsValue }
}

async function exists(file: string): Promise<boolean> {
  return fs.access(file).then(
    () => true,
    () => false,
  )
}

/** A file of the one live Run's world, if it has it. */
async function worldText(workshop: Workshop, file: string): Promise<string | undefined> {
  const worlds = workshop.lines
    .forks()
    .filter((fork) => fork.name?.startsWith('run-') === true && fork.merged === undefined)
  assert.equal(worlds.length, 1, 'one Run world')
  const tree = await workshop.lines.tree((worlds[0] as { id: string }).id)
  return tree.readFile(file).then(
    (bytes) => Buffer.from(bytes).toString('utf8'),
    () => undefined,
  )
}

function call(name: string, input: unknown): ToolCall {
  return { name, input }
}

describe("a Run's tools", () => {
  it('writes its world, not main, and its settlement merges it', async () => {
    await using scratch = await makeScratch({ 'keep.txt': 'main\n' })
    await using workshop = await open(scratch)
    const session = await workshop.openSession({ approver: approveAll })
    const writer = agent('writer', ['write_file', 'read_file'])
    let seen: { main: boolean; world: string | undefined } | undefined
    gate = async () => {
      seen = {
        main: await exists(path.join(scratch.workspace, 'out.txt')),
        world: await worldText(workshop, 'out.txt'),
      }
    }
    const { outcome, value } = await runOf(
      session,
      writer,
      { calls: [call('write_file', { path: 'out.txt', content: 'from the Run\n' })], pause: true },
      'automatic',
    )
    assert.equal(value.results[0]?.type, 'success', value.results[0]?.content)
    // While the Run ran, its write was in its world and main did not have it.
    assert.deepEqual(seen, { main: false, world: 'from the Run\n' })
    assert.equal(outcome.settlementStatus, 'merged', JSON.stringify(outcome))
    assert.equal(
      await fs.readFile(path.join(scratch.workspace, 'out.txt'), 'utf8'),
      'from the Run\n',
    )
    await session.close()
  })

  it('runs shell in the jail, in its world', async () => {
    await using scratch = await makeScratch({ 'keep.txt': 'main\n' })
    await using workshop = await open(scratch)
    const session = await workshop.openSession()
    const sheller = agent('sheller', ['write_file', 'shell'])
    const { outcome, value } = await runOf(session, sheller, {
      calls: [
        call('write_file', { path: 'only-in-world.txt', content: 'world\n' }),
        // The jail's root is /workspace; the world's own file is there, and main's too.
        call('shell', { command: 'pwd; cat only-in-world.txt keep.txt; echo made > by-shell.txt' }),
      ],
    })
    const shell = value.results[1]
    assert.equal(shell?.type, 'success', shell?.content)
    assert.match(shell.content, /\/workspace\nworld\nmain\n/)
    assert.equal(await exists(path.join(scratch.workspace, 'only-in-world.txt')), false)
    assert.equal(await exists(path.join(scratch.workspace, 'by-shell.txt')), false)
    // Kept for review (no one approved a merge): the shell's file is in the world's changes.
    assert.equal(outcome.settlementStatus, 'review')
    const changes = await workshop.lines.diff(outcome.world as string)
    assert.deepEqual(changes.map((change) => change.path).sort(), [
      'by-shell.txt',
      'only-in-world.txt',
    ])
    await session.close()
  })

  it('offers and runs only its definition’s tools, js_eval’s tools.call included', async () => {
    await using scratch = await makeScratch({ 'keep.txt': 'main\n' })
    await using workshop = await open(scratch)
    const session = await workshop.openSession()
    const reader = agent('reader', ['read_file', 'js_eval'])
    const { value } = await runOf(session, reader, {
      calls: [
        call('read_file', { path: 'keep.txt' }),
        call('write_file', { path: 'x.txt', content: 'x' }),
        call('js_eval', {
          code: `JSON.stringify([await tools.call('write_file', { path: 'y.txt', content: 'y' }), (await tools.list()).map((t) => t.name)])`,
        }),
      ],
    })
    assert.deepEqual(value.offered.sort(), ['js_eval', 'read_file'])
    assert.equal(value.results[0]?.type, 'success')
    assert.equal(value.results[1]?.code, 'not_available', value.results[1]?.content)
    const inner = JSON.parse(value.results[2]?.content ?? '') as [
      { type: string; code: string },
      string[],
    ]
    assert.equal(inner[0].code, 'not_available', JSON.stringify(inner))
    assert.deepEqual(inner[1], ['read_file'])
    // Positive control: the session's own js_eval reaches write_file.
    const own = await workshop.toolset.run(
      call('js_eval', {
        code: `(await tools.call('write_file', { path: 'y.txt', content: 'y' })).type`,
      }),
      session.context(),
    )
    assert.equal(own.content, 'success', own.content)
    await session.close()
  })

  it('refuses a write of a read-only definition', async () => {
    await using scratch = await makeScratch()
    await using workshop = await open(scratch)
    const session = await workshop.openSession()
    const looker = agent('looker', ['write_file'], 'read-only')
    const { value, outcome } = await runOf(session, looker, {
      calls: [call('write_file', { path: 'no.txt', content: 'no' })],
    })
    assert.equal(value.results[0]?.type, 'error', value.results[0]?.content)
    assert.equal(value.results[0]?.code, 'read_only_access', value.results[0]?.content)
    assert.deepEqual(await workshop.lines.diff(outcome.world as string), [])
    await session.close()
    // A read-only session's Run writes nothing either, whatever its definition asks.
    const narrow = await workshop.openSession({ access: 'read-only' })
    const writer = await runOf(narrow, agent('writer', ['write_file']), {
      calls: [call('write_file', { path: 'no.txt', content: 'no' })],
    })
    assert.equal(writer.value.results[0]?.code, 'read_only_access')
    await narrow.close()
  })

  it('changes only its own world: no switching, no main, no other Run’s world', async () => {
    await using scratch = await makeScratch({ 'keep.txt': 'main\n' })
    await using workshop = await open(scratch)
    const session = await workshop.openSession()
    const first = await runOf(session, agent('first', ['write_file']), {
      calls: [call('write_file', { path: 'first.txt', content: 'first' })],
    })
    const other = first.outcome.world as string
    const lineTools = [
      'workspace_use',
      'room_write',
      'workspace_merge',
      'workspace_discard',
      'workspace_fork',
    ]
    const { value, outcome } = await runOf(session, agent('mover', lineTools), {
      calls: [
        call('workspace_use', { fork: 'main' }),
        call('workspace_use', { fork: other }),
        call('room_write', { fork: 'main', files: [{ path: 'main.txt', content: 'x' }] }),
        call('room_write', { fork: other, files: [{ path: 'other.txt', content: 'x' }] }),
        call('workspace_fork', {}),
        call('workspace_discard', { fork: 'main' }),
        // Its own world, as a control: written; but not merged nor discarded by itself.
        call('room_write', { files: [{ path: 'mine.txt', content: 'mine' }] }),
        call('workspace_merge', { fork: '$world' }),
        call('workspace_discard', { fork: '$world' }),
      ],
    })
    const codes = value.results.map((result) => result.code ?? result.type)
    assert.deepEqual(
      codes,
      [
        'permission_denied',
        'not_found',
        'permission_denied',
        'not_found',
        'permission_denied',
        'permission_denied',
        'success',
        'permission_denied',
        'permission_denied',
      ],
      JSON.stringify(value.results, null, 1),
    )
    assert.equal(await exists(path.join(scratch.workspace, 'main.txt')), false)
    assert.deepEqual(
      (await workshop.lines.diff(other)).map((change) => change.path),
      ['first.txt'],
    )
    assert.deepEqual(
      (await workshop.lines.diff(outcome.world as string)).map((change) => change.path),
      ['mine.txt'],
    )
    await session.close()
  })

  it('hires children of the Run from js_eval, never naming another parent', async () => {
    await using scratch = await makeScratch()
    await using workshop = await open(scratch)
    const session = await workshop.openSession()
    const code = `
      const team = await agent.roster([{ id: 'helper', program: { kind: 'echo' } }])
      const child = await agent.hire(team, 'helper', { task: 'hello' })
      const result = await child.result()
      let named
      try { await agent.hire(team, 'helper', { task: 'x', parentRun: 'someone-else' }) }
      catch (error) { named = error.code }
      JSON.stringify({ id: child.id, value: result.value, named })`
    const { id, value } = await runOf(session, agent('hirer', ['js_eval']), {
      calls: [call('js_eval', { code })],
    })
    assert.equal(value.results[0]?.type, 'success', value.results[0]?.content)
    const answer = JSON.parse(value.results[0]?.content ?? '') as {
      id: string
      value: unknown
      named: string
    }
    assert.equal(answer.value, 'hello')
    assert.equal(answer.named, 'invalid_input')
    assert.equal((await workshop.store.getRun(answer.id))?.parentId, id)
    // Only that one child: the refused hire admitted nothing.
    assert.deepEqual(
      (await workshop.store.listRuns({ parentId: id })).map((run) => run.id),
      [answer.id],
    )
    await session.close()
  })

  it('reads the workspace’s drive but never changes it: a Run changes only its world', async () => {
    await using scratch = await makeScratch()
    await using workshop = await open(scratch)
    const session = await workshop.openSession()
    // Positive control: the session itself (not a Run) writes the drive.
    const written = await workshop.call('js_eval', {
      code: "(await drive.write('shared.txt', 'from the session')).path",
    })
    assert.equal(written.type, 'success', written.content)
    const code = `
      const seen = await drive.read('shared.txt')
      const tried = []
      for (const change of [
        () => drive.write('shared.txt', 'from a Run'),
        () => drive.mkdir('run-folder'),
        () => drive.remove('shared.txt'),
      ]) {
        try { await change(); tried.push('changed') } catch (error) { tried.push(error.code) }
      }
      JSON.stringify({ seen, tried })`
    const { value } = await runOf(
      session,
      agent('drifter', ['js_eval']),
      { calls: [call('js_eval', { code })] },
      'discard',
    )
    assert.equal(value.results[0]?.type, 'success', value.results[0]?.content)
    assert.deepEqual(JSON.parse(value.results[0]?.content ?? ''), {
      seen: 'from the session',
      tried: ['permission_denied', 'permission_denied', 'permission_denied'],
    })
    // Discarded, the Run left nothing in what every session and jail shares.
    const after = await workshop.call('js_eval', { code: "await drive.read('shared.txt')" })
    assert.equal(after.content, 'from the session')
    await session.close()
  })

  it('ends its background jobs and eval sessions when its program ends', async () => {
    await using scratch = await makeScratch()
    await using workshop = await open(scratch)
    const session = await workshop.openSession()
    const marker = `sleep ${40_000 + Math.floor(Math.random() * 10_000)}`
    const running = (): boolean => {
      try {
        execFileSync('pgrep', ['-f', marker])
        return true
      } catch {
        return false
      }
    }
    const before = new Set(liveEvalSessions)
    let during: { job: boolean; evals: string[] } | undefined
    gate = async () => {
      during = { job: running(), evals: [...liveEvalSessions].filter((id) => !before.has(id)) }
    }
    const { value } = await runOf(session, agent('worker', ['shell', 'js_eval']), {
      calls: [
        call('shell', { command: marker, background: true }),
        call('js_eval', { code: 'globalThis.kept = 1; "kept"', session: 'kept' }),
      ],
      pause: true,
    })
    assert.deepEqual(
      value.results.map((result) => result.type),
      ['success', 'success'],
      JSON.stringify(value.results),
    )
    // While the program ran, its job and its eval session were alive; once it ended, neither.
    assert.equal(during?.job, true)
    assert.equal(during.evals.length, 1)
    assert.equal(running(), false)
    assert.equal(liveEvalSessions.has(during.evals[0] as string), false)
    await session.close()
  })
})

describe("a hired Run's merge over MCP", () => {
  /** Hires a writer through agent_hire, answers the merge prompt with `action`. */
  async function hireAndAnswer(action: 'accept' | 'decline') {
    const scratch = await makeScratch()
    const writer = agent('writer', ['write_file'])
    await fs.writeFile(scratch.configPath, JSON.stringify({ agents: [writer] }))
    const workshop = await open(scratch)
    let server: Server | undefined
    const session = await workshop.openSession({ approver: elicitationApprover(() => server) })
    const mcp = createMcpServer({
      toolset: workshop.toolset,
      context: session.context,
      onCreated: (created) => (server = created),
    })
    const client = new Client(
      { name: 'run-tools-client', version: '1.0.0' },
      { capabilities: { elicitation: {} } },
    )
    let hireAnswered = false
    const prompts: { message: string; afterHire: boolean }[] = []
    client.setRequestHandler(ElicitRequestSchema, async (request) => {
      prompts.push({ message: request.params.message, afterHire: hireAnswered })
      return action === 'accept'
        ? { action, content: { decision: 'approve' } }
        : { action: 'decline' }
    })
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair()
    await mcp.connect(serverSide)
    await client.connect(clientSide)
    const answered = Promise.withResolvers<void>()
    gate = () => answered.promise
    try {
      const task = JSON.stringify({
        calls: [call('write_file', { path: 'hired.txt', content: 'by the Run\n' })],
        pause: true,
      })
      const hire = (await client.callTool({
        name: 'agent_hire',
        arguments: { agent: 'writer', task, settlement: 'automatic' },
      })) as CallToolResult
      assert.notEqual(hire.isError, true, JSON.stringify(hire))
      const id = (hire.structuredContent as { metadata: { id: string } }).metadata.id
      hireAnswered = true
      answered.resolve()
      const awaited = (await client.callTool({
        name: 'run_await',
        arguments: { id, wait_s: 45 },
      })) as CallToolResult
      assert.notEqual(awaited.isError, true, JSON.stringify(awaited))
      return {
        prompts,
        run: await workshop.store.getRun(id),
        inMain: await exists(path.join(scratch.workspace, 'hired.txt')),
      }
    } finally {
      await client.close()
      await session.close()
      await workshop.close()
      await scratch.cleanup()
    }
  }

  it('asks the client after agent_hire answered, and merges when the person accepts', async () => {
    const { prompts, run, inMain } = await hireAndAnswer('accept')
    assert.equal(prompts.length, 1)
    assert.equal(prompts[0]?.afterHire, true)
    assert.match(prompts[0]?.message ?? '', /hired\.txt/)
    assert.equal(run?.settlementStatus, 'merged', JSON.stringify(run))
    assert.equal(inMain, true)
  })

  it('keeps the Run for review when the person declines', async () => {
    const { prompts, run, inMain } = await hireAndAnswer('decline')
    assert.equal(prompts.length, 1)
    assert.equal(run?.settlementStatus, 'review', JSON.stringify(run))
    assert.equal(inMain, false)
  })
})
