import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { parseAgentDef } from '../agent-def.ts'
import type { AgentRuntime } from '../agent-runtime.ts'
import type { ProgramContext } from '../program.ts'
import { Roster } from '../roster.ts'
import { NO_RUN_TOOLS } from '../run-tools.ts'
import { runChatId } from './chat-id.ts'
import {
  ADD_TOOL,
  aborted,
  answers,
  callsTool,
  fixedCatalog,
  llmAgent,
  llmFixture,
  scriptedModel,
  type FixtureTool,
} from './test-llm-fixture.ts'
import { llmProgramFactory } from './llm-program.ts'

const AGENT = llmAgent('adder')
const team = Roster.of([AGENT])

describe('cancelling an llm Run', () => {
  it('reaches the model request in flight: the Run ends cancelled with no output', async (t) => {
    const started = Promise.withResolvers<void>()
    let sawAbort = false
    const model = scriptedModel([
      async (options) => {
        started.resolve()
        await aborted(options.abortSignal as AbortSignal)
        sawAbort = true
        throw new Error('aborted by the caller')
      },
    ])
    const { runtime, store } = await llmFixture(t, fixedCatalog(model))
    const handle = await runtime.hire(team, 'adder', { task: 'slow' })
    await started.promise
    await runtime.cancel(handle.id)
    const result = await handle.result()
    assert.equal(result.status, 'cancelled')
    assert.equal(sawAbort, true)
    assert.equal((await store.getRun(handle.id))?.output, null)
    const types = (await store.listRunEvents(handle.id)).map((event) => event.type)
    assert.ok(types.includes('model-call-intent'))
    assert.ok(!types.includes('model-call-result'))
  })

  it('reaches the tool call in flight, and starts no further step', async (t) => {
    const started = Promise.withResolvers<void>()
    let sawAbort = false
    const slow: FixtureTool = {
      call: async (_input, signal) => {
        started.resolve()
        await aborted(signal)
        sawAbort = true
        return { type: 'error', code: 'cancelled', content: 'cancelled', metadata: {} }
      },
    }
    const model = scriptedModel([
      () => callsTool([{ name: 'slow', input: {} }]),
      () => answers('never'),
    ])
    const { runtime } = await llmFixture(t, fixedCatalog(model), { slow })
    const handle = await runtime.hire(team, 'adder', { task: 'slow tool' })
    await started.promise
    await runtime.cancel(handle.id)
    assert.equal((await handle.result()).status, 'cancelled')
    assert.equal(sawAbort, true)
    assert.equal(model.doGenerateCalls.length, 1)
  })

  it('between steps: exactly one model call', async (t) => {
    const holder: { runtime?: AgentRuntime } = {}
    // The tool asks for the cancel and finishes its work regardless, as a tool that does not
    // watch its signal would: the cancel lands between the steps.
    const cancelling: FixtureTool = {
      call: async (_input, signal, context) => {
        void holder.runtime?.cancel(context.runId)
        await aborted(signal)
        return ADD_TOOL.call({ a: 1, b: 1 }, signal, context)
      },
    }
    const model = scriptedModel([
      () => callsTool([{ name: 'add', input: { a: 1, b: 1 } }]),
      () => answers('never'),
    ])
    const fixture = await llmFixture(t, fixedCatalog(model), { add: cancelling })
    holder.runtime = fixture.runtime
    const handle = await fixture.runtime.hire(team, 'adder', { task: 'add' })
    assert.equal((await handle.result()).status, 'cancelled')
    assert.equal(model.doGenerateCalls.length, 1)
    // The tool ran to its end: its result and message are kept, and no next intent is written.
    const effects = (await fixture.store.listRunEvents(handle.id))
      .map((event) => event.type)
      .filter((type) => /-(intent|result)$/.test(type))
    assert.deepEqual(effects, [
      'model-call-intent',
      'model-call-result',
      'tool-call-intent',
      'tool-call-result',
    ])
    const chat = await fixture.store.listChatMessages(runChatId(handle.id))
    assert.deepEqual(
      chat.map((message) => message.role),
      ['system', 'user', 'assistant', 'tool'],
    )
  })

  it('before the first step: no model call and no trace', async (t) => {
    const model = scriptedModel([() => answers('never')])
    const { store } = await llmFixture(t, fixedCatalog(model))
    const def = parseAgentDef(AGENT)
    const program = llmProgramFactory({ catalog: fixedCatalog(model), store })(def, {
      request: { task: 'x', settlement: 'automatic', parentRun: undefined, limits: {} },
      parentRun: undefined,
    })
    await store.admitRun({ id: 'run-1' })
    const controller = new AbortController()
    controller.abort(new Error('cancelled'))
    const context = {
      runId: 'run-1',
      agent: def,
      task: 'x',
      signal: controller.signal,
      tools: NO_RUN_TOOLS,
      journal: () => Promise.reject(new Error('nothing may be journaled')),
    } as unknown as ProgramContext
    await assert.rejects(program.run(context), /cancelled/)
    assert.equal(model.doGenerateCalls.length, 0)
    assert.deepEqual(await store.listChatMessages(runChatId('run-1')), [])
  })
})
