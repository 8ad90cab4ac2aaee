/** AgentRuntime: Runs that hire Runs (worlds, ceilings, cancellation and settlement of children). */
import assert from 'node:assert/strict'
import { describe, it, type TestContext } from 'node:test'
import { EitriError } from '../errors/eitri-error.ts'
import { FILE_WRITING_PROGRAMS, RUNTIME_ROSTER, runtimeFixture } from './test-runtime.ts'
import { Roster } from './roster.ts'
import type { Store } from '../store/store.ts'
import type { AgentRuntime } from './agent-runtime.ts'
import type { ProgramContext, ProgramFactory } from './program.ts'
import type { RunHandle } from './run-handle.ts'

const roster = RUNTIME_ROSTER

/**
 * Hires a root Run (`hireRoot`) whose echo program makes one hire of its own (`hireChild`) and
 * keeps what that hire threw; answers it with the store.
 */
async function refusalOfHire(
  t: TestContext,
  hireChild: (context: ProgramContext) => Promise<unknown>,
  hireRoot: (runtime: AgentRuntime) => Promise<RunHandle>,
): Promise<{ refusal: unknown; store: Store }> {
  let refusal: unknown
  const { runtime, store } = await runtimeFixture(
    t,
    {},
    {
      programs: {
        ...FILE_WRITING_PROGRAMS,
        echo: () => ({
          async run(context) {
            await hireChild(context).catch((error: unknown) => {
              refusal = error
            })
            return { status: 'completed', value: 'done' }
          },
        }),
      },
    },
  )
  await (await hireRoot(runtime)).result()
  return { refusal, store }
}

describe('AgentRuntime: children', () => {
  /** Programs where `boss` (scripted, reply naming the child) hires its child and awaits it. */
  function bossPrograms(log: string[]): Record<string, ProgramFactory> {
    return {
      ...FILE_WRITING_PROGRAMS,
      echo: (def) => ({
        async run(context) {
          const child = await context.hire(roster, String(context.task), { task: def.id })
          log.push(`hired ${child.id}`)
          const result = await child.ownedResult({ signal: context.signal })
          return {
            status: 'completed',
            value: result.status === 'completed' ? result.value : result.status,
          }
        },
      }),
    }
  }

  it("a child's world forks from its parent's, its changes merge there, and the parent brings them home", async (t) => {
    const log: string[] = []
    const { runtime, store, live } = await runtimeFixture(
      t,
      {},
      { programs: bossPrograms(log), approveMerge: async () => ({ type: 'approved' }) },
    )
    const parent = await runtime.hire(roster, 'echoer', { task: 'writer' })
    const result = await parent.result()
    assert.equal(result.status === 'completed' ? result.value : result.status, 'out.txt')
    assert.equal(
      await live('out.txt'),
      'written by a Run\n',
      "the child's file reached main through its parent",
    )
    const seen = await parent.observe()
    assert.equal(seen.children.length, 1)
    const child = await store.getRun(seen.children[0] as string)
    assert.equal(child?.parentId, parent.id)
    assert.deepEqual(child?.causedBy, [parent.id], 'the ambient parent is a cause')
    assert.deepEqual(seen.causedBy, [child?.id], 'the consumed result is recorded on the consumer')
    assert.equal(child?.settlementStatus, 'merged')
    assert.equal(runtime.activeRuns, 0)
  })

  it('the ceiling refuses a child asking for a tool its parent lacks, and admits no Run', async (t) => {
    const team = Roster.of([
      { id: 'lead', tools: ['read_file'], program: { kind: 'echo' } },
      {
        id: 'shell-user',
        tools: ['read_file', 'shell'],
        program: { kind: 'scripted', reply: 'x' },
      },
    ])
    const { refusal, store } = await refusalOfHire(
      t,
      (context) => context.hire(team, 'shell-user', { task: 'x' }),
      (runtime) => runtime.hire(team, 'lead', { task: 'x' }),
    )
    assert.ok(refusal instanceof EitriError)
    assert.equal(refusal.code, 'permission_denied')
    assert.match(refusal.message, /lacks: shell;/)
    assert.equal((await store.listRuns()).length, 1, 'only the lead was admitted')
  })

  it("the caller's ceiling bounds a root Run, and a program sees the authority it got", async (t) => {
    const seen: unknown[] = []
    const { runtime, store } = await runtimeFixture(
      t,
      {},
      {
        ceiling: { access: 'read-only', tools: ['read_file'], programKinds: ['echo'], depth: 0 },
        programs: {
          ...FILE_WRITING_PROGRAMS,
          echo: () => ({
            async run(context) {
              seen.push(context.authority)
              return { status: 'completed', value: 1 }
            },
          }),
        },
      },
    )
    const team = Roster.of([
      { id: 'reader', access: 'full-access', tools: ['read_file'], program: { kind: 'echo' } },
      { id: 'sheller', tools: ['shell'], program: { kind: 'echo' } },
      { id: 'scripter', program: { kind: 'scripted', reply: 'x' } },
    ])
    await (await runtime.hire(team, 'reader', { task: 'x' })).result()
    assert.deepEqual(seen, [
      { access: 'read-only', tools: ['read_file'], programKinds: ['echo'], depth: 1 },
    ])
    await assert.rejects(runtime.hire(team, 'sheller', { task: 'x' }), /lacks: shell;/)
    await assert.rejects(
      runtime.hire(team, 'scripter', { task: 'x' }),
      /scripted program, which exceeds/,
    )
    assert.equal((await store.listRuns()).length, 1, 'the refused hires wrote nothing')
  })

  it('cancelling a parent cancels its children first', async (t) => {
    const ended: string[] = []
    const log: string[] = []
    const { runtime, store } = await runtimeFixture(
      t,
      {},
      {
        programs: bossPrograms(log),
        onEnded: (id) => ended.push(id),
      },
    )
    const parent = await runtime.hire(roster, 'echoer', { task: 'slow' })
    while (log.length === 0) await new Promise((resolve) => setTimeout(resolve, 5))
    assert.equal(await parent.cancel(), true)
    const [child] = (await parent.observe()).children
    assert.deepEqual(ended, [child, parent.id], 'the child ended before its parent')
    const childRow = await store.getRun(child as string)
    assert.deepEqual([childRow?.status, childRow?.settlementStatus], ['cancelled', 'discarded'])
    const parentRow = await parent.observe()
    assert.deepEqual([parentRow.status, parentRow.settlementStatus], ['cancelled', 'discarded'])
    assert.ok((childRow?.endedAt ?? '') <= (parentRow.endedAt ?? ''))
    assert.equal(runtime.activeRuns, 0)
  })

  it('a parent that does not wait for its hire still settles only after the child', async (t) => {
    const failures: unknown[] = []
    const { runtime, live } = await runtimeFixture(
      t,
      {},
      {
        approveMerge: async () => ({ type: 'approved' }),
        programs: {
          ...FILE_WRITING_PROGRAMS,
          echo: () => ({
            async run(context) {
              context
                .hire(roster, 'writer', { task: 'w' })
                .catch((error: unknown) => failures.push(error))
              return { status: 'completed', value: 'left at once' }
            },
          }),
        },
      },
    )
    const parent = await runtime.hire(roster, 'echoer', { task: 'x' })
    const result = await parent.result()
    assert.deepEqual(failures, [])
    assert.deepEqual([result.settlementStatus, result.settlementReason], ['merged', 'automatic'])
    assert.equal(
      await live('out.txt'),
      'written by a Run\n',
      "the child's work came home through its parent",
    )
    assert.equal(runtime.activeRuns, 0)
  })

  it("a child kept for review is discarded with its parent's world", async (t) => {
    const { runtime, store, lines } = await runtimeFixture(
      t,
      {},
      {
        programs: {
          ...FILE_WRITING_PROGRAMS,
          echo: () => ({
            async run(context) {
              const child = await context.hire(roster, 'writer', {
                task: 'w',
                settlement: 'review',
              })
              return { status: 'completed', value: (await child.result()).settlementStatus }
            },
          }),
        },
      },
    )
    const parent = await runtime.hire(roster, 'echoer', { task: 'x', settlement: 'discard' })
    const result = await parent.result()
    assert.equal(result.status === 'completed' ? result.value : result.status, 'review')
    const [childId] = (await parent.observe()).children
    const child = await store.getRun(childId as string)
    assert.deepEqual(
      [child?.settlementStatus, child?.settlementReason],
      ['discarded', 'parent-discarded'],
    )
    assert.deepEqual(lines.forks(), [], 'both worlds are gone')
  })

  it('a child cannot name another parent than the Run that hires it', async (t) => {
    const { refusal, store } = await refusalOfHire(
      t,
      (context) => context.hire(roster, 'fast', { task: 'x', parentRun: 'elsewhere' }),
      (runtime) => runtime.hire(roster, 'echoer', { task: 'x' }),
    )
    assert.match(String(refusal), /parent must be the current Run/)
    assert.equal((await store.listRuns()).length, 1)
  })
})
