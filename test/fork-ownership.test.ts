/**
 * Fork ownership, for every door that names a fork: a session that does not see every fork
 * (an HTTP connection, an --isolate session) acts only on the forks it owns and their
 * descendants (a Run's world included); every other fork answers `not_found`, word for word
 * like a fork that does not exist. Under --isolate, main is reached only through a person.
 * Positive controls: the owner can do everything it is refused to others; the person, and a
 * principal that sees every fork, see them all; a person's yes lets an isolated session in.
 */
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { describe, it } from 'node:test'
import type { ApprovalDecision, Approver } from '../src/access/approval.ts'
import type { ToolResult } from '../src/tool/tool-result.ts'
import type { Principal } from '../src/workspace/fork-owner.ts'
import { openWorkshop, type Workshop, type WorkshopSession } from '../src/workshop/workshop.ts'
import type { Program } from '../src/agent/program.ts'
import { hireOne } from './helpers/hire-one.ts'
import { makeScratch, type Scratch } from './helpers/scratch.ts'

const approve: Approver = async (): Promise<ApprovalDecision> => ({
  type: 'approved',
  by: 'tester',
})
const alice: Principal = { id: 'connection-alice', seesEveryFork: false }
const bob: Principal = { id: 'connection-bob', seesEveryFork: false }
const NOWHERE = 'f-00000000'

async function open(scratch: Scratch): Promise<Workshop> {
  const workshop = await openWorkshop({
    workspace: scratch.workspace,
    stateDir: scratch.stateDir,
    configPath: scratch.configPath,
    approver: approve,
  })
  const jail = await workshop.jail.availability()
  assert.ok(
    jail.available,
    jail.available ? '' : `install bubblewrap: apt-get install bubblewrap (${jail.reason})`,
  )
  return workshop
}

function caller(workshop: Workshop, session: WorkshopSession) {
  return (name: string, input: unknown): Promise<ToolResult> =>
    workshop.toolset.run({ name, input }, session.context())
}

/** Every door that names a fork, as a tool call (js_eval's `tools.call` included). */
const DOORS: readonly { name: string; call: (fork: string) => [string, unknown] }[] = [
  { name: 'workspace_use', call: (fork) => ['workspace_use', { fork }] },
  { name: 'workspace_diff', call: (fork) => ['workspace_diff', { fork }] },
  { name: 'workspace_review', call: (fork) => ['workspace_review', { fork }] },
  { name: 'workspace_log', call: (fork) => ['workspace_log', { fork }] },
  { name: 'workspace_fork from', call: (fork) => ['workspace_fork', { from: fork }] },
  { name: 'room_files', call: (fork) => ['room_files', { fork }] },
  { name: 'room_read', call: (fork) => ['room_read', { fork, path: 'a.txt' }] },
  {
    name: 'room_write',
    call: (fork) => ['room_write', { fork, files: [{ path: 'a.txt', content: 'door\n' }] }],
  },
  { name: 'workspace_merge', call: (fork) => ['workspace_merge', { fork }] },
  { name: 'workspace_discard', call: (fork) => ['workspace_discard', { fork }] },
  {
    name: 'js_eval tools.call room_write',
    call: (fork) => [
      'js_eval',
      {
        code: `const r = await tools.call('room_write', { fork: ${JSON.stringify(fork)}, files: [{ path: 'a.txt', content: 'door\\n' }] }); r.code + ': ' + r.content`,
      },
    ],
  },
  {
    name: 'js_eval tools.call workspace_use',
    call: (fork) => [
      'js_eval',
      {
        code: `const r = await tools.call('workspace_use', { fork: ${JSON.stringify(fork)} }); r.code + ': ' + r.content`,
      },
    ],
  },
]

/** A refusal as the caller reads it, with the fork named replaced: for comparing two. */
function refusal(result: ToolResult, named: string): string {
  const code = result.type === 'error' ? result.code : 'success'
  return `${code} ${result.content.replaceAll(named, '<fork>')}`
}

describe('fork ownership', () => {
  it('another connection’s forks (and their Runs’ worlds) answer exactly like forks that do not exist, at every door', async () => {
    await using scratch = await makeScratch({ 'a.txt': 'main\n' })
    await using workshop = await open(scratch)
    await using aliceSession = await workshop.openSession({ principal: alice })
    await using bobSession = await workshop.openSession({ principal: bob })
    const asAlice = caller(workshop, aliceSession)
    const asBob = caller(workshop, bobSession)
    const forked = await asAlice('workspace_fork', { name: 'feature' })
    assert.equal(forked.type, 'success', forked.content)
    const feature = String(forked.metadata['fork'])
    await asAlice('room_write', { fork: 'feature', files: [{ path: 'a.txt', content: 'alice\n' }] })
    // A Run of alice's works in a world forked from her fork, owned by the Run.
    const world = await workshop.lines.fork({
      from: feature,
      name: 'world',
      by: alice,
      owner: 'run-1',
    })
    await asBob('workspace_fork', { name: 'bobs' })

    const listed = await asBob('workspace_list', {})
    assert.doesNotMatch(listed.content, new RegExp(`${feature}|feature|${world.id}|world`))
    assert.match(listed.content, /bobs/)

    for (const door of DOORS) {
      for (const named of [feature, 'feature', world.id, 'world']) {
        const [name, input] = door.call(named)
        const [, absentInput] = door.call(NOWHERE)
        const result = await asBob(name, input)
        const absent = await asBob(name, absentInput)
        assert.match(
          refusal(result, named),
          /not_found/,
          `${door.name} ${named}: ${result.content}`,
        )
        assert.equal(
          refusal(result, named),
          refusal(absent, NOWHERE),
          `${door.name} ${named} answers like a fork that does not exist`,
        )
      }
    }
    assert.equal(bobSession.lines.current, 'main', 'bob never got onto another fork')
    assert.equal(
      (await asAlice('room_read', { fork: 'feature', path: 'a.txt' })).content,
      'alice\n',
    )
    assert.ok(
      workshop.lines.forks().some((fork) => fork.id === world.id),
      'the world is still there',
    )

    // Positive control: alice can do at every door what bob could not.
    for (const door of DOORS.filter((door) => !/merge|discard|workspace_use/.test(door.name))) {
      const [name, input] = door.call('feature')
      const result = await asAlice(name, input)
      assert.doesNotMatch(
        refusal(result, 'feature'),
        /not_found/,
        `${door.name}: ${result.content}`,
      )
      if (name === 'workspace_fork')
        await asAlice('workspace_discard', { fork: String(result.metadata['fork']) })
    }
    for (const named of [world.id, 'world']) {
      const read = await asAlice('room_read', { fork: named, path: 'a.txt' })
      assert.equal(read.type, 'success', `alice reaches her Run's world by ${named}`)
    }
    assert.equal((await asAlice('workspace_use', { fork: 'feature' })).type, 'success')
    assert.equal((await asAlice('workspace_discard', { fork: 'world' })).type, 'success')
    const merged = await asAlice('workspace_merge', { fork: 'feature' })
    assert.equal(merged.type, 'success', merged.content)
    assert.equal(await fs.readFile(path.join(scratch.workspace, 'a.txt'), 'utf8'), 'door\n')
  })

  it('names are for display: the same name in two connections reaches each one’s own fork', async () => {
    await using scratch = await makeScratch({ 'a.txt': 'main\n' })
    await using workshop = await open(scratch)
    await using aliceSession = await workshop.openSession({ principal: alice })
    await using bobSession = await workshop.openSession({ principal: bob })
    const asAlice = caller(workshop, aliceSession)
    const asBob = caller(workshop, bobSession)
    assert.equal((await asAlice('workspace_fork', { name: 'work' })).type, 'success')
    const second = await asBob('workspace_fork', { name: 'work' })
    assert.equal(
      second.type,
      'success',
      'a name taken by another owner is neither refused nor told',
    )
    await asAlice('room_write', { fork: 'work', files: [{ path: 'a.txt', content: 'alice\n' }] })
    await asBob('room_write', { fork: 'work', files: [{ path: 'a.txt', content: 'bob\n' }] })
    assert.equal((await asAlice('room_read', { fork: 'work', path: 'a.txt' })).content, 'alice\n')
    assert.equal((await asBob('room_read', { fork: 'work', path: 'a.txt' })).content, 'bob\n')
    // The person sees both, and is asked for an id rather than given either.
    const ambiguous = await workshop.call('room_read', { fork: 'work', path: 'a.txt' })
    assert.equal(ambiguous.type === 'error' && ambiguous.code, 'invalid_input')
    assert.match(ambiguous.content, /Several forks are named work/)
  })

  it('the person and a principal that sees every fork see them all (positive control)', async () => {
    await using scratch = await makeScratch({ 'a.txt': 'main\n' })
    await using workshop = await open(scratch)
    await using aliceSession = await workshop.openSession({ principal: alice })
    await caller(workshop, aliceSession)('workspace_fork', { name: 'feature' })
    await using own = await workshop.openSession({
      principal: { id: 'connection-stdio', seesEveryFork: true },
    })
    for (const call of [workshop.call.bind(workshop), caller(workshop, own)]) {
      assert.match((await call('workspace_list', {})).content, /feature/)
      assert.equal((await call('room_read', { fork: 'feature', path: 'a.txt' })).type, 'success')
    }
    const records = workshop.lines.forks()
    assert.equal(records[0]?.owner, 'connection-alice', 'the owner is recorded')
  })
})

describe('--isolate: one fork per session, main only through a person', () => {
  const carol: Principal = { id: 'connection-carol', seesEveryFork: false }

  it('makes exactly one fork per session, named after its client and numbered among its own', async () => {
    await using scratch = await makeScratch({ 'a.txt': 'main\n' })
    await using workshop = await open(scratch)
    assert.equal(workshop.lines.forks().length, 0)
    await using first = await workshop.openSession({
      principal: carol,
      isolate: true,
      label: 'Claude Code',
    })
    await using second = await workshop.openSession({
      principal: { id: 'connection-dave', seesEveryFork: false },
      isolate: true,
      label: 'Claude Code',
    })
    const forks = workshop.lines.forks()
    assert.deepEqual(
      forks.map((fork) => [fork.name, fork.owner]),
      [
        // Numbered past others' forks, dave's name would tell him carol's session exists.
        ['claude-code-1', 'connection-carol'],
        ['claude-code-1', 'connection-dave'],
      ],
    )
    assert.equal(first.lines.current, forks[0]?.id)
    assert.equal(second.lines.current, forks[1]?.id)
    assert.deepEqual(
      first.lines.list().map((fork) => fork.id),
      [forks[0]?.id],
      'a session sees only its own fork',
    )
    const forked = await caller(workshop, first)('workspace_fork', { name: 'try' })
    assert.match(
      forked.content,
      /^Forked claude-code-1 as try \(id f-[0-9a-f]{8}\)\./,
      'the line forked by its name, not its id',
    )
  })

  it('refuses writing main and switching to it without a person; reading main is allowed', async () => {
    await using scratch = await makeScratch({ 'a.txt': 'main\n' })
    await using workshop = await open(scratch)
    const prompts: string[] = []
    const nobody: Approver = async (request) => {
      prompts.push(request.summary)
      return { type: 'denied', reason: 'the person said no', by: 'tester' }
    }
    await using session = await workshop.openSession({
      principal: carol,
      isolate: true,
      approver: nobody,
    })
    const call = caller(workshop, session)
    const attempts: [string, unknown][] = [
      ['room_write', { fork: 'main', files: [{ path: 'a.txt', content: 'agent\n' }] }],
      ['workspace_use', { fork: 'main' }],
      [
        'js_eval',
        {
          code: "const r = await tools.call('room_write', { fork: 'main', files: [{ path: 'a.txt', content: 'agent' }] }); r.code",
        },
      ],
    ]
    for (const [name, input] of attempts) {
      const result = await call(name, input)
      assert.match(
        `${result.type === 'error' ? result.code : ''} ${result.content}`,
        /permission_denied/,
        name,
      )
    }
    assert.equal(prompts.length, 3, 'each way into main asked the person')
    assert.match(prompts[0] ?? '', /write 1 file: a\.txt into main/)
    assert.notEqual(session.lines.current, 'main')
    assert.equal(await fs.readFile(path.join(scratch.workspace, 'a.txt'), 'utf8'), 'main\n')
    assert.equal((await call('room_read', { fork: 'main', path: 'a.txt' })).content, 'main\n')
    // A view of main handed out for reading refuses writes too.
    const view = await session.lines.workspace('main', { signal: new AbortController().signal })
    await assert.rejects(view.writeFile('a.txt', 'agent\n'), /isolated on a fork/)
    // Discarding its own fork never drops the session onto main: it gets a fresh fork.
    const own = session.lines.current
    assert.equal((await call('workspace_discard', { fork: own })).type, 'success')
    assert.notEqual(session.lines.current, 'main')
    assert.notEqual(session.lines.current, own)
    assert.equal(workshop.lines.forks().length, 1, 'still exactly one session fork')
    await call('write_file', { path: 'a.txt', content: 'agent\n' })
    assert.equal(await fs.readFile(path.join(scratch.workspace, 'a.txt'), 'utf8'), 'main\n')
  })

  it('a person’s yes lets the session write main and switch to it (positive control)', async () => {
    await using scratch = await makeScratch({ 'a.txt': 'main\n' })
    await using workshop = await open(scratch)
    await using session = await workshop.openSession({
      principal: carol,
      isolate: true,
      approver: approve,
    })
    const call = caller(workshop, session)
    const written = await call('room_write', {
      fork: 'main',
      files: [{ path: 'a.txt', content: 'approved\n' }],
    })
    assert.equal(written.type, 'success', written.content)
    assert.equal(await fs.readFile(path.join(scratch.workspace, 'a.txt'), 'utf8'), 'approved\n')
    assert.equal((await call('workspace_use', { fork: 'main' })).type, 'success')
    assert.equal(session.lines.current, 'main')
    await call('write_file', { path: 'b.txt', content: 'on main\n' })
    assert.equal(await fs.readFile(path.join(scratch.workspace, 'b.txt'), 'utf8'), 'on main\n')
  })
})

describe('snapshots of main are seen only by the sessions that made them', () => {
  it('another connection’s calls stay out of workspace_snapshots and workspace_restore', async () => {
    await using scratch = await makeScratch({ 'a.txt': 'a\n' })
    await using workshop = await open(scratch)
    const a = await workshop.openSession({ principal: alice, approver: approve })
    const b = await workshop.openSession({ principal: bob, approver: approve })
    const callA = caller(workshop, a)
    const callB = caller(workshop, b)
    const wrote = await callA('write_file', { path: 'secret-plan.md', content: 'x\n' })
    assert.equal(wrote.type, 'success', wrote.content)
    const seenByB = await callB('workspace_snapshots', {})
    assert.doesNotMatch(seenByB.content, /secret-plan/)
    // The positive controls: the session that made them, and the person, see them.
    assert.match((await callA('workspace_snapshots', {})).content, /secret-plan/)
    assert.match((await workshop.call('workspace_snapshots', {})).content, /secret-plan/)
    const ids =
      (
        (await callA('workspace_snapshots', {})).metadata as { snapshots?: { id: number }[] }
      ).snapshots?.map((record) => record.id) ?? []
    assert.ok(ids.length > 0)
    const restored = await callB('workspace_restore', { snapshot: ids[0] })
    assert.equal(restored.type === 'error' && restored.code, 'not_found', restored.content)
    await a.close()
    await b.close()
  })
})

/** Reads `secret.txt` in its world; with a task of tool calls, makes them and answers theirs. */
const reader: Program = {
  async run(context) {
    const calls = (context.task as { calls?: { name: string; input: unknown }[] }).calls
    const results: string[] = []
    for (const call of calls ?? [{ name: 'read_file', input: { path: 'secret.txt' } }]) {
      const result = await context.tools.call(call, { signal: context.signal })
      results.push(`${result.type === 'error' ? result.code : 'success'}: ${result.content}`)
    }
    return { status: 'completed', value: results }
  },
}

describe('Runs are seen only by the sessions that hired them', () => {
  it('another connection’s Runs (and their Runs’ Runs) answer like Runs that do not exist', async () => {
    await using scratch = await makeScratch({ 'a.txt': 'main\n' })
    await using workshop = await openWorkshop({
      workspace: scratch.workspace,
      stateDir: scratch.stateDir,
      configPath: scratch.configPath,
      approver: approve,
      programs: { scripted: () => reader },
    })
    const a = await workshop.openSession({ principal: alice, isolate: true })
    const b = await workshop.openSession({ principal: bob, isolate: true })
    const callA = caller(workshop, a)
    const callB = caller(workshop, b)
    await callA('write_file', { path: 'secret.txt', content: 'alice’s secret\n' })
    const tools = ['read_file', 'run_list', 'run_observe']
    const def = { id: 'reader', program: { kind: 'scripted' }, tools, access: 'read-only' }
    const hired = await hireOne(a, def, {})
    assert.match(JSON.stringify(hired.outcome.value), /alice’s secret/)
    const doors: [string, Record<string, unknown>][] = [
      ['run_observe', {}],
      ['run_await', { wait_s: 0 }],
      ['run_cancel', {}],
      ['run_settle', { action: 'discard' }],
    ]
    for (const [name, input] of doors) {
      const result = await callB(name, { ...input, id: hired.id })
      const absent = await callB(name, { ...input, id: NOWHERE })
      assert.equal(
        refusal(result, hired.id),
        refusal(absent, NOWHERE),
        `${name} answers like a Run that does not exist: ${result.content}`,
      )
    }
    assert.doesNotMatch((await callB('run_list', {})).content, new RegExp(hired.id))
    // Nor through a Run of bob's, whose tools read Runs too.
    const calls = [
      { name: 'run_list', input: {} },
      { name: 'run_observe', input: { id: hired.id } },
    ]
    const spy = await hireOne(b, def, { calls })
    assert.doesNotMatch(JSON.stringify(spy.outcome.value), /secret|not_found: .*reader/)
    assert.match(JSON.stringify(spy.outcome.value), /not_found/)
    // Positive controls: alice, a Run of hers, and the person read her Run.
    assert.match((await callA('run_observe', { id: hired.id })).content, /alice’s secret/)
    assert.match((await callA('run_list', {})).content, new RegExp(hired.id))
    const own = await hireOne(a, def, { calls })
    assert.match(JSON.stringify(own.outcome.value), /alice’s secret/)
    assert.match((await workshop.call('run_observe', { id: hired.id })).content, /alice’s secret/)
    await a.close()
    await b.close()
  })
})
