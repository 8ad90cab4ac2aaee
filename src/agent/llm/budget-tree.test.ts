/**
 * A tree of llm Runs never spends more than its root's budget, also when a Run's loop ends
 * before the children it hired without waiting (agent_hire, js_eval's `agent.hire`): their
 * carve stays out of its parent's remainder until they end, and what they spent is charged up.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { LanguageModelV4CallOptions } from '@ai-sdk/provider'
import { EitriError } from '../../errors/eitri-error.ts'
import type { ProgramFactory } from '../program.ts'
import { Roster } from '../roster.ts'
import { BudgetLedger } from './model-budget.ts'
import {
  answers,
  callsTool,
  fixedCatalog,
  llmAgent,
  llmFixture,
  scriptedModel,
  usage,
  type FixtureTool,
} from './test-llm-fixture.ts'

/** Three agents, each known to the mock model by its prompt. */
const TEAM = Roster.of(
  ['lead', 'mid', 'grand'].map((id) =>
    llmAgent(id, { budgetDollars: 0.1 }, { prompt: `ROLE-${id.toUpperCase()}` }),
  ),
)

/** Each call spends $0.0081 (100 input, 4,000 output tokens), within its reservation. */
const SPEND = usage(100, 4000)

function roleOf(options: LanguageModelV4CallOptions): string {
  const system = JSON.stringify(options.prompt[0])
  return ['LEAD', 'MID', 'GRAND'].find((role) => system.includes(`ROLE-${role}`)) ?? 'unknown'
}

describe('the budget of a tree of Runs', () => {
  it('charges a grandchild still running when its parent’s loop ended to the root', async (t) => {
    // hire_wait: hires and waits for the result; hire_nowait: hires and answers at once.
    const hireWait: FixtureTool = {
      call: async (input, _signal, context) => {
        const child = await context.hire(TEAM, (input as { agent: string }).agent, {
          task: 'work',
        })
        const result = await child.result()
        return { type: 'success', content: result.status, metadata: {} }
      },
    }
    const hireNoWait: FixtureTool = {
      call: async (input, _signal, context) => {
        // A budget of its own, so that it is carved while the mid Run reserves its next call.
        const child = await context.hire(TEAM, (input as { agent: string }).agent, {
          task: 'work',
          limits: { budgetDollars: 0.05 },
        })
        return { type: 'success', content: `hired ${child.id}`, metadata: {} }
      },
    }
    const turns = { LEAD: 0, MID: 0, GRAND: 0 }
    const model = scriptedModel([
      (options) => {
        const role = roleOf(options) as keyof typeof turns
        const turn = turns[role]++
        if (role === 'MID') {
          // Hires the grandchild and ends its own loop at once, leaving it running.
          if (turn === 0)
            return callsTool([{ name: 'hire_nowait', input: { agent: 'grand' } }], SPEND)
          return answers('mid done', SPEND)
        }
        if (role === 'LEAD' && turn === 0) {
          return callsTool([{ name: 'hire_wait', input: { agent: 'mid' } }], SPEND)
        }
        // The grandchild, and the lead once its child is back: spend until the budget stops them.
        return callsTool([{ name: 'add', input: { a: turn, b: 1 } }], SPEND)
      },
    ])
    const add: FixtureTool = {
      call: async () => ({ type: 'success', content: 'ok', metadata: {} }),
    }
    const { runtime, store } = await llmFixture(t, fixedCatalog(model), {
      hire_wait: hireWait,
      hire_nowait: hireNoWait,
      add,
    })
    const lead = await runtime.hire(TEAM, 'lead', { task: 'lead', settlement: 'discard' })
    const outcome = await lead.result()
    assert.equal(outcome.status, 'waiting', JSON.stringify(outcome))
    assert.equal(outcome.reason, 'budget-exhausted')
    const runs = await store.listRuns()
    assert.equal(runs.length, 3)
    const grand = runs.find((run) => run.agentId === 'grand')
    assert.equal(grand?.reason, 'budget-exhausted', 'the grandchild spent its whole carve')
    let total = 0
    for (const run of runs) total += (await store.getRunMetrics(run.id))?.dollars ?? 0
    assert.ok(turns.GRAND > 2, 'the grandchild made several calls')
    // The lead's budget bounds the whole tree: what the grandchild spent is not spent again.
    assert.ok(total <= 0.1 + 1e-9, `the tree spent $${total}, past the root's $0.1`)
  })
})

describe('a child hired without waiting and without a budget of its own', () => {
  it('starts with what its parent has left when it starts, not nothing', async (t) => {
    // Hired with all the lead had left; by the time it starts, the lead has reserved its next
    // call out of that, so the whole of it is no longer there.
    const hireNoWait: FixtureTool = {
      call: async (_input, _signal, context) => {
        const child = await context.hire(TEAM, 'grand', { task: 'work' })
        return { type: 'success', content: `hired ${child.id}`, metadata: {} }
      },
    }
    let leadTurn = 0
    const model = scriptedModel([
      (options) => {
        if (roleOf(options) === 'GRAND') return answers('grand done', SPEND)
        if (leadTurn++ === 0) return callsTool([{ name: 'hire_nowait', input: {} }], SPEND)
        return answers('lead done', SPEND)
      },
    ])
    const { runtime, store } = await llmFixture(t, fixedCatalog(model), {
      hire_nowait: hireNoWait,
    })
    const lead = await runtime.hire(TEAM, 'lead', { task: 'lead', settlement: 'discard' })
    assert.equal((await lead.result()).status, 'completed')
    const grand = (await store.listRuns()).find((run) => run.agentId === 'grand')
    assert.equal(grand?.status, 'completed', JSON.stringify(grand))
    assert.equal(grand?.output, 'grand done')
    let total = 0
    for (const run of await store.listRuns())
      total += (await store.getRunMetrics(run.id))?.dollars ?? 0
    assert.ok(total <= 0.1 + 1e-9, `the tree spent $${total}`)
  })
})

describe('a hire made as a Run’s tools close', () => {
  it('comes out of the Run’s budget, never out of nothing', async (t) => {
    // A tool call's work may end after the loop did (a js_eval hire still reading its roster
    // file): its hire reaches the runtime while the Run's tools close, after the model loop.
    const BIG = Roster.of([
      llmAgent('big', { budgetDollars: 1000, maxModelSteps: 16 }, { prompt: 'ROLE-GRAND' }),
    ])
    let lateHire: Promise<unknown> | undefined
    const model = scriptedModel([
      (options) =>
        roleOf(options) === 'GRAND'
          ? callsTool([{ name: 'add', input: { a: Math.random(), b: 1 } }], SPEND)
          : answers('lead done', SPEND),
    ])
    const session = new BudgetLedger(0.05)
    const { runtime, store } = await llmFixture(
      t,
      fixedCatalog(model),
      {
        add: { call: async () => ({ type: 'success', content: 'ok', metadata: {} }) },
      },
      {
        budget: session,
        runTools: async (scope) => ({
          offered: async () => [],
          call: async () => ({ type: 'error', code: 'not_available', content: 'x', metadata: {} }),
          close: async () => {
            // The lead's tools only (every Run's tools close so).
            if (lateHire !== undefined) return
            lateHire = scope
              .hire(BIG, 'big', { task: 'spend', limits: { budgetDollars: 10 } })
              .then((child) => child.result())
              .catch((error: unknown) => error)
            await lateHire
          },
        }),
      },
    )
    const lead = await runtime.hire(TEAM, 'lead', { task: 'lead', settlement: 'discard' })
    assert.equal((await lead.result()).status, 'completed')
    // The program had returned: the hire is refused as any later one is, and nothing spent.
    const refusal = await lateHire
    assert.ok(EitriError.isInstance(refusal), String(refusal))
    assert.equal(refusal.code, 'conflict')
    assert.match(refusal.message, /finishing and hires no more children/)
    let total = 0
    for (const run of await store.listRuns())
      total += (await store.getRunMetrics(run.id))?.dollars ?? 0
    assert.ok(total <= 0.05 + 1e-9, `the session's Runs spent $${total} of its $0.05`)
  })
})

describe('a child of a Run that spends nothing itself', () => {
  it('comes out of what that Run’s own budget came from: the session’s', async (t) => {
    // A program of the host's own (the library's `programs`) that hires a model agent and
    // waits for it: it has no ledger, so its child's budget comes out of the session's.
    const BIG = Roster.of([
      llmAgent('big', { budgetDollars: 1000, maxModelSteps: 16 }, { prompt: 'ROLE-GRAND' }),
    ])
    const orchestrator: ProgramFactory = () => ({
      async run(context) {
        const child = await context.hire(BIG, 'big', { task: 'spend' })
        const result = await child.result()
        return { status: 'completed', value: result.status }
      },
    })
    const model = scriptedModel([
      () => callsTool([{ name: 'add', input: { a: Math.random(), b: 1 } }], SPEND),
    ])
    const session = new BudgetLedger(0.05)
    const { runtime, store } = await llmFixture(
      t,
      fixedCatalog(model),
      { add: { call: async () => ({ type: 'success', content: 'ok', metadata: {} }) } },
      { budget: session, programs: { scripted: orchestrator } },
    )
    const boss = await runtime.hire(
      Roster.of([{ id: 'boss', program: { kind: 'scripted' } }]),
      'boss',
      {
        task: 'hire',
        settlement: 'discard',
      },
    )
    const outcome = await boss.result()
    assert.equal(outcome.status, 'completed', JSON.stringify(outcome))
    // The child worked until the session's money ran out.
    assert.equal(outcome.value, 'waiting')
    let total = 0
    for (const run of await store.listRuns())
      total += (await store.getRunMetrics(run.id))?.dollars ?? 0
    assert.ok(total > 0.03, `the child spent $${total}`)
    assert.ok(total <= 0.05 + 1e-9, `the session's Runs spent $${total} of its $0.05`)
  })
})
