import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { openStore } from '../../store/open-store.ts'
import { durableWrite } from '../durable-write.ts'
import { StepJournal } from './step-journal.ts'

async function fixture(t: { after: (fn: () => Promise<void>) => void }, signal?: AbortSignal) {
  const store = await openStore('sqlite::memory:')
  t.after(() => store.close())
  await store.admitRun({ id: 'run-1' })
  const logged: string[] = []
  const journal = new StepJournal({
    store,
    runId: 'run-1',
    chatId: 'chat-1',
    durably: (write) => durableWrite(write, { signal }),
    log: (message) => logged.push(message),
  })
  const types = async () => (await store.listRunEvents('run-1')).map((event) => event.type)
  const roles = async () => (await store.listChatMessages('chat-1')).map((message) => message.role)
  return { store, journal, types, roles, logged }
}

const METRICS = {
  provider: 'local',
  model: 'stub-1',
  inputsId: 'sha256:x',
  modelSteps: 1,
  inputTokens: 1,
  outputTokens: 1,
  cachedInputTokens: 0,
  dollars: 0,
  steps: [],
}

describe('the step journal', () => {
  it('holds records until an intent is written, then writes them in order with it', async (t) => {
    const { store, journal, types, roles } = await fixture(t)
    journal.chat([{ role: 'system', content: 's' }])
    journal.event({ type: 'model-call-result' })
    journal.metrics(METRICS)
    assert.deepEqual(await types(), [])
    assert.deepEqual(await roles(), [])
    await journal.write({ type: 'tool-call-intent' })
    assert.deepEqual(await types(), ['model-call-result', 'tool-call-intent'])
    assert.deepEqual(await roles(), ['system'])
    assert.equal((await store.getRunMetrics('run-1'))?.modelSteps, 1)
    // Nothing held: no write at all.
    await journal.write()
    assert.deepEqual(await types(), ['model-call-result', 'tool-call-intent'])
  })

  it('when cancelled, keeps what happened for the exit write and drops the unstarted intent', async (t) => {
    const controller = new AbortController()
    const { journal, types, roles, logged } = await fixture(t, controller.signal)
    journal.event({ type: 'tool-call-result' })
    journal.chat([{ role: 'tool', content: '2' }])
    controller.abort(new Error('cancelled'))
    await assert.rejects(journal.write({ type: 'model-call-intent' }), /cancel/)
    assert.deepEqual(await types(), [])
    await journal.writeOnExit()
    assert.deepEqual(await types(), ['tool-call-result'])
    assert.deepEqual(await roles(), ['tool'])
    assert.deepEqual(logged, [])
  })

  it('logs, and does not throw, when the exit write fails', async (t) => {
    const { store, journal, logged } = await fixture(t)
    journal.event({ type: 'tool-call-result' })
    await store.close()
    await journal.writeOnExit()
    assert.equal(logged.length, 1)
    assert.match(logged[0] as string, /could not be written/)
  })
})
