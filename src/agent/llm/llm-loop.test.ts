import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { LanguageModelV4CallOptions } from '@ai-sdk/provider'
import { EitriError } from '../../errors/eitri-error.ts'
import type { AgentDefInput } from '../agent-def.ts'
import type { Store } from '../../store/store.ts'
import { runChatId } from './chat-id.ts'
import { HARNESS_PREAMBLE } from './harness-prompt.ts'
import { inputsId } from './inputs-id.ts'
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

function team(program: Record<string, unknown> = {}, extra: Partial<AgentDefInput> = {}) {
  return llmTeam('adder', program, { prompt: 'You add numbers with the add tool.', ...extra })
}

/** What the store holds when an effect starts: the journal's types, chat roles, metrics. */
interface SeenAtEffect {
  effect: string
  journal: string[]
  chat: string[]
  steps: number | undefined
}

/**
 * Records what the store holds for its one Run each time `look` is called as an effect
 * starts; the test sets `holder.store` once the fixture is built.
 */
function effectWatcher() {
  const seen: SeenAtEffect[] = []
  const holder: { store?: Store } = {}
  const look = async (effect: string) => {
    const store = holder.store as Store
    const [run] = await store.listRuns()
    const id = (run as { id: string }).id
    seen.push({
      effect,
      journal: (await store.listRunEvents(id)).map((event) => event.type),
      chat: (await store.listChatMessages(runChatId(id))).map((message) => message.role),
      steps: (await store.getRunMetrics(id))?.modelSteps,
    })
  }
  return { seen, holder, look }
}

/** The text of every message of a model call's prompt, by role. */
function promptRoles(call: LanguageModelV4CallOptions): string[] {
  return call.prompt.map((message) => message.role)
}

describe('the llm loop', () => {
  it('runs a 2-step loop: a tool call through the Run tools, then the final text as its value', async (t) => {
    const model = scriptedModel([
      () => callsTool([{ name: 'add', input: { a: 1, b: 1 } }], usage(100, 10)),
      () => answers('The result is 2.', usage(130, 6)),
    ])
    const { runtime, store } = await llmFixture(t, fixedCatalog(model))
    const handle = await runtime.hire(team(), 'adder', { task: 'What is 1 + 1?' })
    const result = await handle.result()
    assert.equal(result.status, 'completed')
    assert.equal(result.status === 'completed' && result.value, 'The result is 2.')
    assert.equal(result.status === 'completed' && result.output, 'The result is 2.')
    assert.equal(model.doGenerateCalls.length, 2)
    const [first, second] = model.doGenerateCalls as [
      LanguageModelV4CallOptions,
      LanguageModelV4CallOptions,
    ]
    // The system prompt is the harness preamble, then the agent's prompt; the task is the user message.
    const system = first.prompt[0]
    assert.equal(system?.role, 'system')
    assert.equal(system?.content, `${HARNESS_PREAMBLE}\n\nYou add numbers with the add tool.`)
    assert.equal(first.prompt[1]?.role, 'user')
    assert.deepEqual(first.prompt[1]?.content, [{ type: 'text', text: 'What is 1 + 1?' }])
    // Exactly the Run's tools are offered, and the model is never given a way to run them.
    assert.deepEqual(
      first.tools?.map((entry) => entry.name),
      ['add'],
    )
    assert.equal(first.maxOutputTokens, 4096)
    assert.deepEqual(promptRoles(second), ['system', 'user', 'assistant', 'tool'])
    const toolMessage = second.prompt[3] as { content: { output: unknown }[] }
    assert.deepEqual(toolMessage.content[0]?.output, { type: 'text', value: '2' })

    const events = await store.listRunEvents(handle.id)
    assert.deepEqual(
      events.map((event) => event.type),
      [
        'trigger',
        'started',
        'model-call-intent',
        'model-call-result',
        'tool-call-intent',
        'tool-call-result',
        'model-call-intent',
        'model-call-result',
        'finished',
      ],
    )
    const toolIntent = events.find((event) => event.type === 'tool-call-intent')
    assert.deepEqual((toolIntent?.data as { input: unknown }).input, { a: 1, b: 1 })

    const metrics = await store.getRunMetrics(handle.id)
    assert.ok(metrics)
    assert.equal(metrics.provider, 'local')
    assert.equal(metrics.model, 'stub-1')
    assert.equal(metrics.modelSteps, 2)
    assert.equal(metrics.inputTokens, 230)
    assert.equal(metrics.outputTokens, 16)
    // $1 and $2 a million tokens.
    assert.ok(Math.abs(metrics.dollars - (230 * 1 + 16 * 2) / 1e6) < 1e-12)
    assert.deepEqual(
      metrics.steps.map((step) => [step.step, step.toolCalls, step.inputTokens]),
      [
        [0, ['add'], 100],
        [1, [], 130],
      ],
    )
    const offered = [
      {
        name: 'add',
        description: 'Adds two numbers.',
        input_schema: ADD_TOOL.schema ?? {},
        parameters: ADD_TOOL.schema ?? {},
      },
    ]
    assert.equal(metrics.inputsId, inputsId(system?.content, offered, 'local:stub-1'))
    assert.notEqual(metrics.inputsId, inputsId(system?.content, [], 'local:stub-1'))

    const chatId = runChatId(handle.id)
    assert.equal((await store.getRun(handle.id))?.chatId, chatId)
    const chat = await store.listChatMessages(chatId)
    assert.deepEqual(
      chat.map((message) => message.role),
      ['system', 'user', 'assistant', 'tool', 'assistant'],
    )
  })

  it('writes what happens between two effects in one commit, which ends on the next intent', async (t) => {
    const { seen, holder, look } = effectWatcher()
    const model = scriptedModel([
      async () => {
        await look('model call 0')
        return callsTool([{ name: 'add', input: { a: 1, b: 1 } }])
      },
      async () => {
        await look('model call 1')
        return answers('2')
      },
    ])
    const add: FixtureTool = {
      ...ADD_TOOL,
      call: async (input, signal, context) => {
        await look('tool call')
        return ADD_TOOL.call(input, signal, context)
      },
    }
    const { runtime, store } = await llmFixture(t, fixedCatalog(model), { add })
    holder.store = store
    const writes = new Map<string, number>()
    for (const name of ['appendRunStep', 'appendChatMessages', 'recordRunMetrics'] as const) {
      const original = store[name].bind(store) as (...args: unknown[]) => Promise<unknown>
      ;(store as unknown as Record<string, unknown>)[name] = (...args: unknown[]) => {
        writes.set(name, (writes.get(name) ?? 0) + 1)
        return original(...args)
      }
    }
    const handle = await runtime.hire(team(), 'adder', { task: 'What is 1 + 1?' })
    assert.equal((await handle.result()).status, 'completed')
    // Each effect starts only once its intent is committed, with all that came before it.
    assert.deepEqual(seen, [
      {
        effect: 'model call 0',
        journal: ['trigger', 'started', 'model-call-intent'],
        chat: ['system', 'user'],
        steps: undefined,
      },
      {
        effect: 'tool call',
        journal: [
          'trigger',
          'started',
          'model-call-intent',
          'model-call-result',
          'tool-call-intent',
        ],
        chat: ['system', 'user', 'assistant'],
        steps: 1,
      },
      {
        effect: 'model call 1',
        journal: [
          'trigger',
          'started',
          'model-call-intent',
          'model-call-result',
          'tool-call-intent',
          'tool-call-result',
          'model-call-intent',
        ],
        chat: ['system', 'user', 'assistant', 'tool'],
        steps: 1,
      },
    ])
    // One commit per effect, and one for the last model call's records: four for two steps.
    assert.deepEqual(Object.fromEntries(writes), { appendRunStep: 4 })
    assert.equal((await store.getRunMetrics(handle.id))?.modelSteps, 2)
    assert.deepEqual(
      (await store.listChatMessages(runChatId(handle.id))).map((message) => message.role),
      ['system', 'user', 'assistant', 'tool', 'assistant'],
    )
  })

  it("runs a read-only tool with no commit of its own: its intent and result ride in the next effect's commit", async (t) => {
    const { seen, holder, look } = effectWatcher()
    const model = scriptedModel([
      async () => {
        await look('model call 0')
        return callsTool([{ name: 'peek', input: { n: 0 } }])
      },
      async () => {
        await look('model call 1')
        return callsTool([
          { name: 'peek', input: { n: 1 } },
          { name: 'add', input: { a: 1, b: 1 } },
        ])
      },
      async () => {
        await look('model call 2')
        return answers('2')
      },
    ])
    const peek: FixtureTool = {
      readOnly: true,
      call: async (input) => {
        await look(`peek ${(input as { n: number }).n}`)
        return { type: 'success', content: 'seen', metadata: {} }
      },
    }
    const add: FixtureTool = {
      ...ADD_TOOL,
      call: async (input, signal, context) => {
        await look('add')
        return ADD_TOOL.call(input, signal, context)
      },
    }
    const { runtime, store } = await llmFixture(t, fixedCatalog(model), { peek, add })
    holder.store = store
    let commits = 0
    const original = store.appendRunStep.bind(store)
    store.appendRunStep = (...args) => {
      commits++
      return original(...args)
    }
    const handle = await runtime.hire(team(), 'adder', { task: 'What is 1 + 1?' })
    assert.equal((await handle.result()).status, 'completed')
    const start = ['trigger', 'started', 'model-call-intent']
    const step0 = [...start, 'model-call-result', 'tool-call-intent', 'tool-call-result']
    const step1 = [...step0, 'model-call-intent', 'model-call-result']
    assert.deepEqual(seen, [
      { effect: 'model call 0', journal: start, chat: ['system', 'user'], steps: undefined },
      // The read-only call runs on the model call's intent: nothing was committed for it.
      { effect: 'peek 0', journal: start, chat: ['system', 'user'], steps: undefined },
      {
        effect: 'model call 1',
        journal: [...step0, 'model-call-intent'],
        chat: ['system', 'user', 'assistant', 'tool'],
        steps: 1,
      },
      {
        effect: 'peek 1',
        journal: [...step0, 'model-call-intent'],
        chat: ['system', 'user', 'assistant', 'tool'],
        steps: 1,
      },
      // The effectful call after it is committed first, with the read-only call before it.
      {
        effect: 'add',
        journal: [...step1, 'tool-call-intent', 'tool-call-result', 'tool-call-intent'],
        chat: ['system', 'user', 'assistant', 'tool', 'assistant'],
        steps: 2,
      },
      {
        effect: 'model call 2',
        journal: [
          ...step1,
          'tool-call-intent',
          'tool-call-result',
          'tool-call-intent',
          'tool-call-result',
          'model-call-intent',
        ],
        chat: ['system', 'user', 'assistant', 'tool', 'assistant', 'tool'],
        steps: 2,
      },
    ])
    // Three model calls and one effectful tool call, then the last records: five commits (the
    // two read-only calls would have made seven).
    assert.equal(commits, 5)
  })

  it('keeps the trace when the Run world is discarded, under distinct chat ids for parallel Runs', async (t) => {
    const model = scriptedModel([() => answers('done')])
    const { runtime, store } = await llmFixture(t, fixedCatalog(model))
    const [one, two] = await Promise.all([
      runtime.hire(team(), 'adder', { task: 'first', settlement: 'review' }),
      runtime.hire(team(), 'adder', { task: 'second', settlement: 'review' }),
    ])
    await Promise.all([one.result(), two.result()])
    assert.notEqual(runChatId(one.id), runChatId(two.id))
    assert.match(
      runChatId(one.id),
      /^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    )
    assert.equal(runChatId(one.id), runChatId(one.id))
    assert.equal((await runtime.settle(one.id, 'discard')).settled, true)
    assert.equal((await store.getRun(one.id))?.settlementStatus, 'discarded')
    const kept = await store.listChatMessages(runChatId(one.id))
    assert.deepEqual(
      kept.map((message) => [message.role, message.content]),
      [
        ['system', `${HARNESS_PREAMBLE}\n\nYou add numbers with the add tool.`],
        ['user', 'first'],
        ['assistant', [{ type: 'text', text: 'done' }]],
      ],
    )
    const other = await store.listChatMessages(runChatId(two.id))
    assert.equal(other[1]?.content, 'second')
  })

  it('fails at the model-step bound', async (t) => {
    let n = 0
    const model = scriptedModel([() => callsTool([{ name: 'add', input: { a: n++, b: 1 } }])])
    const { runtime } = await llmFixture(t, fixedCatalog(model))
    const result = await (
      await runtime.hire(team({ maxModelSteps: 3 }), 'adder', { task: 'loop' })
    ).result()
    assert.equal(result.status, 'failed')
    assert.match(
      String(result.status === 'failed' && result.error),
      /exceeded its model-step bound/,
    )
    assert.equal(model.doGenerateCalls.length, 3)
    // A hire may lower the bound, never raise it.
    const lowered = await (
      await runtime.hire(team({ maxModelSteps: 3 }), 'adder', {
        task: 'loop',
        limits: { maxModelSteps: 1 },
      })
    ).result()
    assert.equal(lowered.status, 'failed')
    assert.equal(model.doGenerateCalls.length, 4)
    await assert.rejects(
      runtime.hire(team({ maxModelSteps: 3 }), 'adder', {
        task: 'loop',
        limits: { maxModelSteps: 4 },
      }),
      /Hire refused, no Run admitted: 4 is above the 3 model steps/,
    )
  })

  it('fails on three identical tool calls in a row, without running the third', async (t) => {
    let calls = 0
    const counted: FixtureTool = {
      ...ADD_TOOL,
      call: async (input, signal, context) => {
        calls++
        return ADD_TOOL.call(input, signal, context)
      },
    }
    const model = scriptedModel([() => callsTool([{ name: 'add', input: { a: 1, b: 1 } }])])
    const { runtime, store } = await llmFixture(t, fixedCatalog(model), { add: counted })
    const handle = await runtime.hire(team(), 'adder', { task: 'loop' })
    const result = await handle.result()
    assert.equal(result.status, 'failed')
    assert.equal(calls, 2)
    assert.equal(model.doGenerateCalls.length, 3)
    assert.equal((await store.getRun(handle.id))?.reason, 'repeated-tool-call')
  })

  it('ends waiting, budget-exhausted, with no output, when the next call cannot be reserved', async (t) => {
    // The first call reports 3,000 input tokens: $0.003 spent of a $0.01 budget.
    const model = scriptedModel([
      () => callsTool([{ name: 'add', input: { a: 1, b: 1 } }], usage(3000, 10)),
      () => answers('never'),
    ])
    const { runtime, store } = await llmFixture(t, fixedCatalog(model))
    const handle = await runtime.hire(team({ budgetDollars: 0.01 }), 'adder', { task: 'add' })
    const result = await handle.result()
    assert.deepEqual(
      { ...result, id: undefined, world: undefined },
      {
        id: undefined,
        world: undefined,
        status: 'waiting',
        reason: 'budget-exhausted',
        settlementStatus: 'review',
        settlementReason: 'execution-waiting',
      },
    )
    assert.equal(model.doGenerateCalls.length, 1)
    // Exactly: the first reservation fitted the budget, and the second (at least the 4,096
    // output tokens at $2 a million) did not fit what the first call left.
    const events = await store.listRunEvents(handle.id)
    const reserved = events
      .filter((event) => event.type === 'model-call-intent')
      .map((event) => (event.data as { reservedDollars: number }).reservedDollars)
    assert.equal(reserved.length, 1)
    const spent = (3000 * 1 + 10 * 2) / 1e6
    assert.ok((reserved[0] as number) <= 0.01)
    assert.ok(0.01 - spent < (4096 * 2) / 1e6)
    assert.ok(0.01 - spent + (3000 * 1) / 1e6 > (reserved[0] as number))
    const row = await store.getRun(handle.id)
    assert.equal(row?.output, null)
    // The tool call of the step that was paid for ran.
    const types = (await store.listRunEvents(handle.id)).map((event) => event.type)
    assert.ok(types.includes('tool-call-result'))
  })
})

describe('hiring an llm agent', () => {
  it('refuses a model with no known price, naming the fix, and admits nothing', async (t) => {
    const model = scriptedModel([() => answers('x')])
    const { runtime, store } = await llmFixture(t, fixedCatalog(model, null))
    const error = await runtime
      .hire(team(), 'adder', { task: 'x' })
      .catch((caught: unknown) => caught)
    assert.ok(EitriError.isInstance(error))
    assert.equal(error.code, 'invalid_input')
    assert.match(error.message, /local:stub-1 has no known price.*"prices": \{"local:stub-1"/)
    assert.deepEqual(await store.listRuns(), [])
    assert.equal(model.doGenerateCalls.length, 0)
  })

  it('refuses a budget that cannot pay for the first call; the same hire with enough is admitted', async (t) => {
    const model = scriptedModel([() => answers('x')])
    const { runtime, store } = await llmFixture(t, fixedCatalog(model))
    await assert.rejects(
      runtime.hire(team({ budgetDollars: 0.008 }), 'adder', { task: 'x' }),
      /cannot pay for the first model call/,
    )
    await assert.rejects(
      runtime.hire(team(), 'adder', { task: 'x', limits: { budgetDollars: 0.001 } }),
      /cannot pay for the first model call/,
    )
    await assert.rejects(
      runtime.hire(team({ budgetDollars: 0.5 }), 'adder', {
        task: 'x',
        limits: { budgetDollars: 0.6 },
      }),
      /above the \$0.5 agent "adder" may spend/,
    )
    assert.deepEqual(await store.listRuns(), [])
    const result = await (
      await runtime.hire(team({ budgetDollars: 0.009 }), 'adder', { task: 'x' })
    ).result()
    assert.equal(result.status, 'completed')
  })

  it("carves a child's budget from its parent's remainder, refusing a child above it", async (t) => {
    const answersOf: string[] = []
    const hireChild: FixtureTool = {
      call: async (input, _signal, context) => {
        const budget = (input as { budget: number }).budget
        try {
          const child = await context.hire(team(), 'adder', {
            task: 'child',
            limits: { budgetDollars: budget },
          })
          const result = await child.result()
          answersOf.push(`child ${result.status}`)
          return { type: 'success', content: result.status, metadata: {} }
        } catch (error) {
          answersOf.push((error as Error).message)
          return {
            type: 'error',
            code: 'invalid_input',
            content: (error as Error).message,
            metadata: {},
          }
        }
      },
    }
    let step = 0
    const model = scriptedModel([
      (options) => {
        if (JSON.stringify(options.prompt[1]).includes('"child"')) return answers('child done')
        step++
        // Within what the parent has left; then its whole budget, more than it has left.
        if (step === 1) return callsTool([{ name: 'hire_child', input: { budget: 0.9 } }])
        if (step === 2) return callsTool([{ name: 'hire_child', input: { budget: 1 } }])
        return answers('parent done')
      },
    ])
    const { runtime, store } = await llmFixture(t, fixedCatalog(model), { hire_child: hireChild })
    const parent = await runtime.hire(team({ budgetDollars: 1 }), 'adder', { task: 'parent' })
    const result = await parent.result()
    assert.equal(result.status, 'completed')
    assert.equal(answersOf[0], 'child completed')
    assert.match(
      answersOf[1] ?? '',
      /Hire refused, no Run admitted: \$1 is above the \$0\.99\d* the parent Run has left/,
    )
    assert.equal((await store.listRuns({ parentId: parent.id })).length, 1)
    // The child's spending counts against the parent: the tree's total is the sum.
    const parentMetrics = await store.getRunMetrics(parent.id)
    assert.equal(parentMetrics?.modelSteps, 3)
  })
})
