import fs from 'node:fs/promises'
import path from 'node:path'
import assert from 'node:assert/strict'
import { describe, it, type TestContext } from 'node:test'
import { EitriError } from '../errors/eitri-error.ts'
import type { ApprovalAnswer } from '../ports/access-context.ts'
import { PERSON_PRINCIPAL } from '../workspace/fork-owner.ts'
import { gitCommandsStarted } from '../workspace/git/run-git.ts'
import { agentDefHash } from './agent-def.ts'
import { INTERPRETER_VERSION } from './agent-runtime-options.ts'
import { AgentRuntime } from './agent-runtime.ts'
import { FILE_WRITING_PROGRAMS, RUNTIME_ROSTER, runtimeFixture } from './test-runtime.ts'
import { Roster } from './roster.ts'
import type { ProgramOutcome } from './program.ts'

const roster = RUNTIME_ROSTER

/** An approver that must not be asked. */
const noQuestions = async (): Promise<ApprovalAnswer> => {
  throw new Error('nobody should have been asked')
}

describe('AgentRuntime: hire and settlement', () => {
  it('an echo Run completes, records its provenance, and settles merged without asking', async (t) => {
    const { runtime, store, lines } = await runtimeFixture(t, {}, { approveMerge: noQuestions })
    const handle = await runtime.hire(roster, 'echoer', { task: 'evidence' })
    const result = await handle.result()
    assert.deepEqual(
      {
        status: result.status,
        settlement: result.settlementStatus,
        reason: result.settlementReason,
      },
      { status: 'completed', settlement: 'merged', reason: 'no-changes' },
    )
    assert.equal(result.status === 'completed' ? result.value : undefined, 'evidence')
    const row = await handle.observe()
    assert.equal(row.kind, 'agent-task')
    assert.equal(row.agentId, 'echoer')
    assert.equal(row.agentVersion, 1)
    assert.equal(row.programKind, 'echo')
    assert.equal(row.interpreterVersion, INTERPRETER_VERSION)
    assert.equal(row.agentDefHash, agentDefHash(roster.lookup('echoer')))
    assert.equal(row.isolation, 'fork')
    assert.equal(row.settlementPolicy, 'automatic')
    assert.equal(row.world, `run-${handle.id}`)
    assert.match(row.roster ?? '', /^sha256:[0-9a-f]{64}$/)
    assert.ok(row.endedAt !== null)
    const journal = await store.listRunEvents(handle.id)
    assert.deepEqual(journal[0], { ...journal[0], type: 'trigger', data: { task: 'evidence' } })
    assert.deepEqual(lines.forks(), [], 'the empty world is gone')
    assert.equal(runtime.activeRuns, 0)
  })

  it('with main watched and unchanged, an echo hire starts no git process from hire to settled result', async (t) => {
    const { runtime, lines, workspace } = await runtimeFixture(
      t,
      { 'a.txt': 'one\n' },
      { programs: FILE_WRITING_PROGRAMS },
      undefined,
      { watch: true },
    )
    const echo = async () => {
      const before = gitCommandsStarted()
      const result = await (await runtime.hire(roster, 'echoer', { task: 'quiet' })).result()
      assert.deepEqual([result.settlementStatus, result.settlementReason], ['merged', 'no-changes'])
      return gitCommandsStarted() - before
    }
    // The watcher walks main first; until it has, a snapshot asks git about everything.
    for (let tries = 0; (await echo()) > 0; tries++) {
      assert.ok(tries < 100, 'the watcher never settled')
      await new Promise((resolve) => setTimeout(resolve, 20))
    }
    assert.deepEqual([await echo(), await echo()], [0, 0])
    assert.deepEqual(lines.forks(), [], 'each empty world was removed')
    const discarded = (await lines.overview()).filter((fork) => fork.state === 'discarded')
    assert.ok(discarded.length >= 3 && discarded.every((fork) => fork.changes === 0))
    // Positive control: main changed, so the next world is forked from a fresh snapshot (git
    // runs), and a Run that writes is compared and merged by git.
    await fs.writeFile(path.join(workspace, 'a.txt'), 'two\n')
    const beforeWriter = gitCommandsStarted()
    const written = await (await runtime.hire(roster, 'writer', { task: 'w' })).result()
    assert.equal(written.settlementStatus, 'review', 'into main, nobody to approve')
    assert.ok(gitCommandsStarted() > beforeWriter)
    const world = lines.forks().find((fork) => fork.name === written.world)
    assert.equal(
      Buffer.from(await (await lines.tree(world?.id ?? '')).readFile('a.txt')).toString(),
      'two\n',
      'the world saw main as it is now',
    )
  })

  it("merges a Run's changes into the line it was hired from, and into main only with a yes", async (t) => {
    const asked: string[] = []
    const person: { answer?: string } = {}
    const { runtime, lines, live } = await runtimeFixture(
      t,
      {},
      {
        programs: FILE_WRITING_PROGRAMS,
        approveMerge: async (request) => {
          asked.push(request.summary)
          return person.answer === undefined
            ? { type: 'approved' }
            : { type: 'refused', reason: person.answer }
        },
      },
    )
    const approved = await (await runtime.hire(roster, 'writer', { task: 'write' })).result()
    assert.equal(approved.settlementStatus, 'merged')
    assert.equal(await live('out.txt'), 'written by a Run\n')
    assert.equal(asked.length, 1)
    assert.match(asked[0] ?? '', /into main .*out\.txt \(added\)/)

    person.answer = 'not today'
    const refused = await (
      await runtime.hire(roster, 'writer2', { task: 'write', settlement: 'automatic' })
    ).result()
    assert.deepEqual(
      [refused.settlementStatus, refused.settlementReason],
      ['review', 'approval-refused: not today'],
    )
    assert.ok(
      lines.forks().some((fork) => fork.name === refused.world),
      'the fork is kept',
    )
  })

  it('a root Run hired from a fork merges into that fork without asking anyone', async (t) => {
    const session = { line: 'main' }
    const { runtime, lines, live } = await runtimeFixture(
      t,
      {},
      { programs: FILE_WRITING_PROGRAMS, approveMerge: noQuestions, line: () => session.line },
    )
    session.line = (await lines.fork({ name: 'session' })).id
    const result = await (await runtime.hire(roster, 'writer', { task: 'write' })).result()
    assert.deepEqual([result.settlementStatus, result.settlementReason], ['merged', 'automatic'])
    const tree = await lines.tree('session')
    assert.equal(Buffer.from(await tree.readFile('out.txt')).toString(), 'written by a Run\n')
    assert.equal(await live('out.txt'), undefined, 'main is untouched')
  })

  it('an automatic merge that conflicts keeps the world for review, naming the paths', async (t) => {
    const session = { line: 'main' }
    const { runtime, lines } = await runtimeFixture(
      t,
      {},
      { programs: FILE_WRITING_PROGRAMS, approveMerge: noQuestions, line: () => session.line },
    )
    session.line = (await lines.fork({ name: 'session' })).id
    const slowWriter = Roster.of([
      {
        id: 'writer',
        program: { kind: 'scripted', delayMs: 1000, reply: 'the Run\n', result: 'out.txt' },
      },
    ])
    const handle = await runtime.hire(slowWriter, 'writer', { task: 'write' })
    // The world is forked at admission: the session's own write after it is the other side.
    const tree = await lines.tree('session')
    await tree.writeFileAtomic('out.txt', Buffer.from('the session\n'))
    const result = await handle.result()
    assert.equal(result.status, 'completed')
    assert.deepEqual(
      [result.settlementStatus, result.settlementReason],
      ['review', 'merge-conflict: out.txt'],
    )
    assert.ok(
      lines.forks().some((fork) => fork.name === result.world),
      'the world is kept',
    )
    const after = await lines.tree('session')
    assert.equal(Buffer.from(await after.readFile('out.txt')).toString(), 'the session\n')
  })

  it('review keeps the fork, owned by the Run; a later merge settles it once', async (t) => {
    const { runtime, lines, live } = await runtimeFixture(
      t,
      {},
      { programs: FILE_WRITING_PROGRAMS, approveMerge: async () => ({ type: 'approved' }) },
    )
    const handle = await runtime.hire(roster, 'writer', { task: 'w', settlement: 'review' })
    const result = await handle.result()
    assert.deepEqual([result.settlementStatus, result.settlementReason], ['review', 'policy'])
    const fork = lines.forks().find((candidate) => candidate.name === result.world)
    assert.equal(fork?.owner, handle.id)
    assert.equal(await live('out.txt'), undefined)
    assert.deepEqual(await runtime.settle(handle.id, 'merge'), {
      settled: true,
      reason: 'merged-after-review',
    })
    assert.equal(await live('out.txt'), 'written by a Run\n')
    assert.equal((await handle.observe()).settlementStatus, 'merged')
    await assert.rejects(runtime.settle(handle.id, 'discard'), /settled as merged already/)
    await assert.rejects(runtime.settle(handle.id, 'merge'), { code: 'conflict' })
  })

  it('discard removes the world', async (t) => {
    const { runtime, lines } = await runtimeFixture(t, {}, { programs: FILE_WRITING_PROGRAMS })
    const result = await (
      await runtime.hire(roster, 'writer', { task: 'w', settlement: 'discard' })
    ).result()
    assert.deepEqual([result.settlementStatus, result.settlementReason], ['discarded', 'policy'])
    assert.deepEqual(lines.forks(), [])
    await assert.rejects(runtime.settle(result.id, 'merge'), /settled as discarded already/)
  })

  it('a bad hire admits no Run and writes nothing', async (t) => {
    const { runtime, store, lines } = await runtimeFixture(t)
    const bad: [string, () => Promise<unknown>, RegExp][] = [
      ['unknown agent', () => runtime.hire(roster, 'nobody', { task: 'x' }), /No agent "nobody"/],
      [
        'stale ref',
        () => runtime.hire(roster, { id: 'echoer', version: 7 }, { task: 'x' }),
        /stale/,
      ],
      ['no task', () => runtime.hire(roster, 'echoer', {} as never), /task is required/],
      [
        'a function as task',
        () => runtime.hire(roster, 'echoer', { task: { f: () => 1 } }),
        /task\.f/,
      ],
      [
        'bad settlement',
        () => runtime.hire(roster, 'echoer', { task: 'x', settlement: 'later' as never }),
        /settlement must be one of/,
      ],
      [
        'unknown option',
        () => runtime.hire(roster, 'echoer', { task: 'x', tsak: 1 } as never),
        /tsak unknown option/,
      ],
      [
        'unknown parent',
        () => runtime.hire(roster, 'echoer', { task: 'x', parentRun: 'r-1' }),
        /no live Run r-1/,
      ],
      [
        'bad limits',
        () => runtime.hire(roster, 'echoer', { task: 'x', limits: { steps: 1 } as never }),
        /limits\.steps/,
      ],
    ]
    for (const [name, hire, message] of bad) await assert.rejects(hire(), message, name)
    assert.deepEqual(await store.listRuns(), [])
    assert.deepEqual(lines.forks(), [])
  })

  it('a failure after the row is written marks the Run failed with the reason', async (t) => {
    const { store, lines } = await runtimeFixture(t)
    // The trigger is committed with the row; the next step, forking the world, fails (the
    // terminal write after it is retried until it lands, so it lands here).
    const forkWorld = lines.fork.bind(lines)
    lines.fork = () => Promise.reject(new Error('disk full'))
    t.after(() => {
      lines.fork = forkWorld
    })
    const runtime = new AgentRuntime({
      store,
      lines,
      line: 'main',
      principal: PERSON_PRINCIPAL,
    })
    t.after(() => runtime.close())
    const refusal = await runtime.hire(roster, 'echoer', { task: 'x' }).then(
      () => undefined,
      (error: unknown) => error,
    )
    assert.ok(refusal instanceof EitriError)
    assert.match(refusal.message, /world-fork-failed: disk full/)
    const [row] = await store.listRuns()
    assert.equal(row?.id, (refusal.data as { runId?: string }).runId)
    assert.deepEqual(
      [row?.status, row?.reason, row?.error, row?.settlementStatus],
      ['failed', 'world-fork-failed', 'disk full', 'discarded'],
    )
    assert.deepEqual(
      (await store.listRunEvents(row?.id ?? '')).map((event) => event.type),
      ['trigger', 'finished'],
      'the trigger is journaled with the row; the program never started',
    )
    assert.deepEqual(lines.forks(), [], 'no world was forked')
    assert.equal(runtime.activeRuns, 0)
  })

  it('a root Run cannot be hired from a line its caller may not see, and nothing is written', async (t) => {
    const { runtime, store, lines } = await runtimeFixture(t)
    const other = await lines.fork({ name: 'someone-elses' })
    const stranger = new AgentRuntime({
      store,
      lines,
      line: other.id,
      principal: { id: 'connection-x', seesEveryFork: false },
    })
    t.after(() => stranger.close())
    await assert.rejects(stranger.hire(roster, 'echoer', { task: 'x' }), { code: 'not_found' })
    assert.deepEqual(await store.listRuns(), [])
    assert.equal(lines.forks().length, 1)
    assert.equal(runtime.activeRuns, 0)
  })
})

describe('AgentRuntime: how a program ends', () => {
  /** A runtime whose echo programs end as `outcome` says (or throw it). */
  async function ending(t: TestContext, outcome: ProgramOutcome | Error) {
    return runtimeFixture(
      t,
      {},
      {
        programs: {
          echo: () => ({
            run: async () => {
              if (outcome instanceof Error) throw outcome
              return outcome
            },
          }),
        },
      },
    )
  }

  it('waiting: the result says why, and the world goes to review', async (t) => {
    const { runtime, lines } = await ending(t, { status: 'waiting', reason: 'budget-exhausted' })
    const result = await (await runtime.hire(roster, 'echoer', { task: 'x' })).result()
    assert.deepEqual(
      [
        result.status,
        result.status === 'waiting' ? result.reason : '',
        result.settlementStatus,
        result.settlementReason,
      ],
      ['waiting', 'budget-exhausted', 'review', 'execution-waiting'],
    )
    assert.equal(lines.forks().length, 1, 'the world is kept')
  })

  it('a program that fails or throws: failed, the world discarded', async (t) => {
    for (const outcome of [{ status: 'failed', error: 'no luck' } as const, new Error('no luck')]) {
      const { runtime, lines } = await ending(t, outcome)
      const result = await (await runtime.hire(roster, 'echoer', { task: 'x' })).result()
      assert.deepEqual(
        [result.status, result.status === 'failed' ? result.error : '', result.settlementStatus],
        ['failed', 'no luck', 'discarded'],
      )
      assert.deepEqual(lines.forks(), [])
    }
  })
})

describe('AgentRuntime: cancellation, scope and close', () => {
  it('a close racing a hire between its row and its start cancels that Run', async (t) => {
    const { runtime, lines } = await runtimeFixture(t)
    const hiring = runtime.hire(roster, 'echoer', { task: 'x' })
    await runtime.close()
    const handle = await hiring
    const row = await handle.observe()
    assert.deepEqual(
      [row.status, row.reason, row.settlementStatus],
      ['cancelled', 'cancelled before it started', 'discarded'],
    )
    assert.deepEqual(lines.forks(), [])
  })

  it('cancel is scoped to the runtime that owns the Run', async (t) => {
    const { runtime, store, lines } = await runtimeFixture(t)
    const other = new AgentRuntime({
      store,
      lines,
      line: 'main',
      principal: { id: 'person', seesEveryFork: true },
    })
    t.after(() => other.close())
    const handle = await runtime.hire(roster, 'slow', { task: 'x' })
    assert.equal(await other.cancel(handle.id), false)
    assert.equal((await handle.observe()).status, 'running')
    assert.equal(await handle.cancel(), true)
    const result = await handle.result()
    assert.deepEqual(
      [result.status, result.settlementStatus, result.settlementReason],
      ['cancelled', 'discarded', 'cancelled'],
    )
    assert.equal(await handle.cancel(), false, 'an ended Run has nothing to cancel')
  })

  it('close fences admission, cancels every Run, waits for them, and is idempotent', async (t) => {
    const { runtime, store, lines } = await runtimeFixture(t)
    const handles = await Promise.all(
      [1, 2, 3].map(() => runtime.hire(roster, 'slow', { task: 'x' })),
    )
    await Promise.all([runtime.close(), runtime.close()])
    // Cancelled, not completed: close stopped the slow programs rather than waiting them out.
    for (const handle of handles) assert.equal((await handle.observe()).status, 'cancelled')
    await assert.rejects(runtime.hire(roster, 'echoer', { task: 'x' }), /admission is closed/)
    assert.equal((await store.listRuns()).length, 3, 'the refused hire wrote no row')
    assert.deepEqual(lines.forks(), [])
    await runtime.close()
  })
})
