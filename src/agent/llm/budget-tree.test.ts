/**
 * A tree of llm Runs never spends more than its root's budget, also when a Run's loop ends
 * before the children it hired without waiting (agent_hire, js_eval's `agent.hire`): their
 * carve stays out of its parent's remainder until they end, and what they spent is charged up.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { LanguageModelV4CallOptions } from '@ai-sdk/provider'
import { Roster } from '../roster.ts'
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
