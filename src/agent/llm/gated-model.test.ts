/**
 * The loop hands the AI SDK a model call before the call's intent is durable (so the SDK
 * prepares it meanwhile); the provider must hear of it only once the intent's write has
 * resolved, and never when that write fails or the Run is cancelled while it syncs.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { EitriError } from '../../errors/eitri-error.ts'
import type { RunStepRecords } from '../../store/run-trace.ts'
import type { Store } from '../../store/store.ts'
import {
  aborted,
  answers,
  callsTool,
  fixedCatalog,
  llmFixture,
  llmTeam,
  scriptedModel,
} from './test-llm-fixture.ts'

const team = llmTeam('adder', {}, { prompt: 'You add numbers with the add tool.' })

/** Whether a step's write ends on a model call's intent. */
const endsOnModelIntent = (step: RunStepRecords): boolean =>
  step.events?.at(-1)?.type === 'model-call-intent'

/**
 * Replaces the store's `appendRunStep` by one that writes through the real store, then passes
 * what it wrote (and the write's outcome) to `after` before resolving: a slow sync, as the
 * caller sees it.
 */
function delayWrites(
  store: Store,
  after: (
    step: RunStepRecords,
    written: Promise<unknown>,
    signal: AbortSignal | undefined,
  ) => Promise<unknown>,
): void {
  const original = store.appendRunStep.bind(store)
  store.appendRunStep = (runId, step, options) => {
    const written = original(runId, step, options)
    return after(step, written, options?.signal) as ReturnType<Store['appendRunStep']>
  }
}

describe('a model call and its intent', () => {
  it('reaches the model only once its intent is durable, though the SDK starts on it before', async (t) => {
    // For each model call: whether every intent write begun so far had resolved.
    const intentsDurable: boolean[] = []
    let pending = 0
    const model = scriptedModel([
      () => {
        intentsDurable.push(pending === 0)
        return callsTool([{ name: 'add', input: { a: 1, b: 1 } }])
      },
      () => {
        intentsDurable.push(pending === 0)
        return answers('2')
      },
    ])
    const { runtime, store } = await llmFixture(t, fixedCatalog(model))
    delayWrites(store, async (step, written) => {
      if (!endsOnModelIntent(step)) return written
      pending += 1
      try {
        const value = await written
        // The sync taking its time: 30 ms more before the writer hears.
        await new Promise((resolve) => setTimeout(resolve, 30))
        return value
      } finally {
        pending -= 1
      }
    })
    const handle = await runtime.hire(team, 'adder', { task: 'What is 1 + 1?' })
    assert.equal((await handle.result()).status, 'completed')
    assert.deepEqual(intentsDurable, [true, true])
  })

  it('is never made when its intent cannot be written: the Run fails on the write', async (t) => {
    const model = scriptedModel([() => answers('never')])
    const { runtime, store } = await llmFixture(t, fixedCatalog(model))
    delayWrites(store, async (step, written) => {
      await written
      if (endsOnModelIntent(step)) {
        // Not retryable: the loop ends on it.
        throw new EitriError('conflict', 'The store refused the intent (test).')
      }
      return written
    })
    const handle = await runtime.hire(team, 'adder', { task: 'What is 1 + 1?' })
    const result = await handle.result()
    assert.equal(result.status, 'failed')
    assert.match(String(result.status === 'failed' && result.error), /refused the intent/)
    assert.equal(model.doGenerateCalls.length, 0)
  })

  it('is never made when the Run is cancelled while its intent is synced', async (t) => {
    const model = scriptedModel([() => answers('never')])
    const { runtime, store } = await llmFixture(t, fixedCatalog(model))
    const syncing = Promise.withResolvers<void>()
    delayWrites(store, async (step, written, signal) => {
      const value = await written
      if (endsOnModelIntent(step) && signal !== undefined) {
        // Durable, but the writer hears only after the Run's cancel reached the loop.
        syncing.resolve()
        await aborted(signal)
      }
      return value
    })
    const handle = await runtime.hire(team, 'adder', { task: 'What is 1 + 1?' })
    await syncing.promise
    await runtime.cancel(handle.id)
    assert.equal((await handle.result()).status, 'cancelled')
    assert.equal(model.doGenerateCalls.length, 0)
  })
})
