import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { BudgetLedger, estimateTokens } from './model-budget.ts'
import {
  ADD_TOOL,
  answers,
  callsTool,
  fixedCatalog,
  llmFixture,
  llmTeam,
  scriptedModel,
  usage,
  type FixtureTool,
} from './test-llm-fixture.ts'

describe('the token estimate', () => {
  it('bounds non-ASCII text by its UTF-8 bytes, and keeps ASCII at three characters a token', () => {
    // CJK text runs about a token a character: three characters a token would reserve a third.
    const cjk = '漢字かな交じり文'.repeat(500)
    assert.ok(estimateTokens(cjk) >= cjk.length, String(estimateTokens(cjk)))
    assert.equal(estimateTokens(cjk), Buffer.byteLength(cjk))
    assert.equal(estimateTokens('abcdef'), 2)
    assert.equal(estimateTokens('ab漢'), 1 + 3)
    // An emoji (a surrogate pair) counts its four bytes.
    assert.equal(estimateTokens('🙂'), 4)
  })
})

describe('a budget ledger', () => {
  it('answers what a call cost beyond its reservation', () => {
    const ledger = new BudgetLedger(1)
    const fits = ledger.reserve(0.1)
    assert.ok(fits)
    assert.equal(ledger.settle(fits, 0.05), 0)
    const over = ledger.reserve(0.1)
    assert.ok(over)
    assert.ok(Math.abs(ledger.settle(over, 0.4) - 0.3) < 1e-12)
    assert.ok(Math.abs(ledger.spent - 0.45) < 1e-12)
  })

  it("charges a child's spending beyond its carve to its parent at once, and once", () => {
    const root = new BudgetLedger(1)
    const parent = new BudgetLedger(0.5, root)
    assert.ok(root.carve(0.5))
    const child = new BudgetLedger(0.2, parent)
    assert.ok(parent.carve(0.2))
    const call = child.reserve(0.1)
    assert.ok(call)
    // The provider reports $0.9: $0.7 past the child's budget, $0.4 past its parent's.
    child.settle(call, 0.9)
    // At once, before the child ends: the parent is charged the $0.7 beyond the child's carve,
    // and the root the $0.4 beyond the parent's budget, so a sibling cannot reserve it.
    assert.ok(Math.abs(parent.spent - 0.7) < 1e-12, String(parent.spent))
    assert.equal(parent.remaining, 0)
    assert.ok(Math.abs(root.spent - 0.4) < 1e-12, String(root.spent))
    assert.ok(Math.abs(root.remaining - 0.1) < 1e-12, String(root.remaining))
    assert.equal(root.reserve(0.2), undefined)
    // When they end, nothing is charged twice: the tree spent the $0.9 reported.
    child.end()
    assert.ok(Math.abs(parent.spent - 0.9) < 1e-12, String(parent.spent))
    assert.equal(parent.carved, 0)
    parent.end()
    assert.ok(Math.abs(root.spent - 0.9) < 1e-12, String(root.spent))
    assert.equal(root.carved, 0)
    assert.ok(Math.abs(root.remaining - 0.1) < 1e-12)
  })
})

describe('a budget ledger whose Run ends before its children', () => {
  it('keeps their carves out of its parent until they are back, and carves no more', () => {
    const root = new BudgetLedger(1)
    assert.ok(root.carve(0.5))
    const mid = new BudgetLedger(0.5, root)
    assert.ok(mid.carve(0.4))
    const grand = new BudgetLedger(0.4, mid)
    // The mid Run's program ended; its child runs on.
    mid.end()
    assert.equal(mid.carve(0.01), false, 'an ended Run hires no budget')
    assert.equal(root.remaining, 0.5, 'the grandchild still holds its carve')
    grand.reserve(0.3)
    grand.settle({ dollars: 0.3 }, 0.3)
    grand.end()
    assert.equal(root.carved, 0)
    assert.ok(Math.abs(root.spent - 0.3) < 1e-12, `the root was charged $${root.spent}`)
  })
})

describe('an llm Run whose provider reports more than was reserved', () => {
  it('is charged the excess and ends, budget-exhausted, before any further call or tool', async (t) => {
    const ran: string[] = []
    const add: FixtureTool = {
      ...ADD_TOOL,
      call: async (input, signal, context) => {
        ran.push('add')
        return ADD_TOOL.call(input, signal, context)
      },
    }
    const hireChild: FixtureTool = {
      call: async (_input, _signal, context) => {
        const child = await context.hire(llmTeam('adder'), 'adder', {
          task: 'child',
          limits: { budgetDollars: 0.1 },
        })
        const result = await child.result()
        ran.push(`child ${result.status} ${result.status === 'waiting' ? result.reason : ''}`)
        return { type: 'success', content: result.status, metadata: {} }
      },
    }
    const model = scriptedModel([
      (options) => {
        if (JSON.stringify(options.prompt).includes('"child"')) {
          // Ten million input tokens at $1 a million: $10, far past the child's $0.1.
          return callsTool([{ name: 'add', input: { a: 1, b: 1 } }], usage(10_000_000, 10))
        }
        return callsTool([{ name: 'hire_child', input: {} }])
      },
    ])
    const { runtime, store } = await llmFixture(t, fixedCatalog(model), {
      add,
      hire_child: hireChild,
    })
    const parent = await runtime.hire(llmTeam('boss', { budgetDollars: 1 }), 'boss', {
      task: 'parent',
    })
    const result = await parent.result()
    assert.equal(result.status, 'waiting')
    assert.equal(result.status === 'waiting' && result.reason, 'budget-exhausted')
    // The child's tool call was not run; the parent made no call after the child's.
    assert.deepEqual(ran, ['child waiting budget-exhausted'])
    assert.equal(model.doGenerateCalls.length, 2)
    const [child] = await store.listRuns({ parentId: parent.id })
    assert.ok(child)
    const childEvents = await store.listRunEvents(child.id)
    const settled = childEvents.find((event) => event.type === 'model-call-result')?.data as {
      dollars: number
      beyondReservationDollars: number
    }
    // The excess is recorded as spent, not dropped.
    assert.ok(Math.abs(settled.dollars - 10.00002) < 1e-9, JSON.stringify(settled))
    assert.ok(settled.beyondReservationDollars > 9.9)
    assert.equal(childEvents.filter((event) => event.type === 'tool-call-intent').length, 0)
  })

  it('still completes when the call that cost more was the last (no further call is made)', async (t) => {
    const model = scriptedModel([() => answers('done', usage(10_000_000, 10))])
    const { runtime } = await llmFixture(t, fixedCatalog(model))
    const result = await (
      await runtime.hire(llmTeam('solo', { budgetDollars: 1 }), 'solo', { task: 'x' })
    ).result()
    assert.equal(result.status, 'completed')
  })

  it('reserves enough for CJK input that a provider counts a token a character', async (t) => {
    const task = '请把这段中文翻译成英文并且保留原来的格式。'.repeat(200)
    const model = scriptedModel([
      // A provider's count: a token each character of the task, and the rest of the prompt.
      (options) =>
        answers('ok', usage(task.length + JSON.stringify(options.prompt).length / 4, 10)),
    ])
    const { runtime, store } = await llmFixture(t, fixedCatalog(model))
    const handle = await runtime.hire(llmTeam('cjk', { budgetDollars: 1 }), 'cjk', { task })
    assert.equal((await handle.result()).status, 'completed')
    const events = await store.listRunEvents(handle.id)
    const intent = events.find((event) => event.type === 'model-call-intent')?.data as {
      estimatedInputTokens: number
    }
    const settled = events.find((event) => event.type === 'model-call-result')?.data as {
      inputTokens: number
      beyondReservationDollars?: number
    }
    assert.ok(
      intent.estimatedInputTokens >= settled.inputTokens,
      JSON.stringify({ intent, settled }),
    )
    assert.equal(settled.beyondReservationDollars, undefined)
  })
})
