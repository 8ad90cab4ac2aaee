import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { setTimeout as delay } from 'node:timers/promises'
import { EitriError } from '../errors/eitri-error.ts'
import { openStore } from '../store/open-store.ts'
import type { Store } from '../store/store.ts'
import { PERSON_PRINCIPAL } from '../workspace/fork-owner.ts'
import { AgentRuntime } from './agent-runtime.ts'
import { Roster } from './roster.ts'
import { RunLeases } from './run-lease.ts'
import { settleReviewedRun } from './run-review.ts'
import { runtimeFixture } from './test-runtime.ts'

const roster = Roster.of([
  { id: 'fast', program: { kind: 'scripted', delayMs: 10, reply: 'fast' } },
  { id: 'medium', program: { kind: 'scripted', delayMs: 1500, reply: 'medium' } },
  { id: 'slow', program: { kind: 'scripted', delayMs: 60_000, reply: 'slow' } },
])

/**
 * For each journal event, by type: the Run's status when it was appended alone (and whether its
 * sync was deferred), or `with` the status its row was written with in the same transaction
 * (an admission, a finish).
 */
function watchingStore(store: Store, seen: [string, string | undefined][]): Store {
  return new Proxy(store, {
    get(target, key, receiver) {
      if (key === 'appendRunEvents') {
        return async (
          runId: string,
          events: readonly { type: string }[],
          call?: { deferSync?: boolean },
        ) => {
          const row = await target.getRun(runId)
          const deferred = call?.deferSync === true ? ', its sync deferred' : ''
          for (const event of events) seen.push([event.type, `${row?.status}${deferred}`])
          return target.appendRunEvents(runId, events, call)
        }
      }
      if (key === 'admitRun') {
        return async (...args: Parameters<Store['admitRun']>) => {
          const row = await target.admitRun(...args)
          for (const event of args[0].events ?? []) seen.push([event.type, `with ${row.status}`])
          return row
        }
      }
      if (key === 'finishRun') {
        return async (...args: Parameters<Store['finishRun']>) => {
          const row = await target.finishRun(...args)
          for (const event of args[1].events ?? []) seen.push([event.type, `with ${row.status}`])
          return row
        }
      }
      return Reflect.get(target, key, receiver) as unknown
    },
  })
}

describe('AgentRuntime with leases: durability of Runs', () => {
  it('obeys a cancel request another process leaves in the store, within about a second', async (t) => {
    const { runtime, store, url } = await runtimeFixture(t, {}, {}, { heartbeatMs: 1000 })
    const other = await openStore(url)
    t.after(() => other.close())
    const handle = await runtime.hire(roster, 'slow', { task: 'wait' })
    assert.equal((await store.getRun(handle.id))?.leaseOwner !== undefined, true, 'held')
    const askedAt = Date.now()
    await other.requestRunCancel(handle.id, 'another-process')
    const result = await handle.result()
    const took = Date.now() - askedAt
    assert.equal(result.status, 'cancelled')
    assert.ok(took < 1500, `cancelled after ${took} ms`)
    const types = (await store.listRunEvents(handle.id)).map((event) => event.type)
    assert.deepEqual(
      types.filter((type) => type === 'cancel-requested'),
      ['cancel-requested'],
      'the request is journaled once, by the store',
    )
    assert.equal(types.at(-1), 'finished')
  })

  it('journals started, then finished only once the row is terminal', async (t) => {
    const { store, lines } = await runtimeFixture(t)
    const seen: [string, string | undefined][] = []
    const runtime = new AgentRuntime({
      store: watchingStore(store, seen),
      lines,
      line: 'main',
      principal: PERSON_PRINCIPAL,
    })
    t.after(() => runtime.close())
    const handle = await runtime.hire(roster, 'fast', { task: 'go' })
    assert.equal((await handle.result()).status, 'completed')
    const journal = await store.listRunEvents(handle.id)
    assert.deepEqual(
      journal.map((event) => event.type),
      ['trigger', 'started', 'finished'],
    )
    assert.deepEqual(journal[2]?.data, { status: 'completed' })
    // The trigger is committed with the row, `finished` with the terminal row (the store's
    // contract says such events are written in the row's transaction).
    assert.deepEqual(seen, [
      ['trigger', 'with running'],
      // Nothing outside rests on `started` before the terminal row's sync (decision 0018).
      ['started', 'running, its sync deferred'],
      ['finished', 'with completed'],
    ])
  })

  it('keeps a Run running and its handle unresolved while the store refuses its terminal write', async (t) => {
    const { store, lines } = await runtimeFixture(t)
    const outage = { on: true, refused: 0 }
    const flaky = new Proxy(store, {
      get(target, key, receiver) {
        if (key === 'finishRun') {
          return (...args: Parameters<Store['finishRun']>) => {
            if (!outage.on) return target.finishRun(...args)
            outage.refused += 1
            return Promise.reject(new EitriError('store_unavailable', 'the store is busy'))
          }
        }
        return Reflect.get(target, key, receiver) as unknown
      },
    })
    const runtime = new AgentRuntime({
      store: flaky,
      lines,
      line: 'main',
      principal: PERSON_PRINCIPAL,
    })
    t.after(() => runtime.close())
    const handle = await runtime.hire(roster, 'fast', { task: 'go' })
    let resolved = false
    void handle.result().then(() => (resolved = true))
    await delay(400)
    assert.ok(outage.refused >= 2, `retried (${outage.refused} tries)`)
    assert.equal(resolved, false)
    assert.equal((await store.getRun(handle.id))?.status, 'running')
    outage.on = false
    const result = await handle.result()
    assert.equal(result.status, 'completed')
    assert.equal((await store.getRun(handle.id))?.status, 'completed')
  })

  it('a Run whose lease lapses is swept, and its handle answers failed/interrupted', async (t) => {
    const { runtime, store, leases, url, lines } = await runtimeFixture(
      t,
      {},
      {},
      { heartbeatMs: 100, ttlMs: 300 },
    )
    const handle = await runtime.hire(roster, 'medium', { task: 'work' })
    // This process stops renewing (as if frozen); another process's keeper sweeps.
    await leases?.close()
    const other = await openStore(url)
    t.after(() => other.close())
    const sweeper = await RunLeases.start(other, { sweepMs: 100 })
    t.after(() => sweeper.close())
    const result = await handle.result()
    assert.equal(result.status, 'failed')
    assert.equal(
      result.status === 'failed' ? (result.error as { code?: string }).code : undefined,
      'interrupted',
    )
    const row = await store.getRun(handle.id)
    assert.deepEqual(
      [row?.status, row?.reason, row?.settlementStatus],
      // The sweep keeps its world for a person; this process, having lost it, settles nothing.
      ['failed', 'interrupted', 'review'],
    )
    const finished = (await store.listRunEvents(handle.id)).filter(
      (event) => event.type === 'finished',
    )
    assert.equal(finished.length, 1, 'the sweep journaled it; the runtime did not again')
    // A person settles it (was: left open, which nothing could settle once its process died).
    const world = row?.world as string
    assert.notEqual(lines.find(world), 'main', 'its world is kept for the person')
    const outcome = await settleReviewedRun({
      store,
      lines,
      runId: handle.id,
      action: 'discard',
      approve: undefined,
      signal: new AbortController().signal,
    })
    assert.deepEqual(outcome, { settled: true, reason: 'discarded-after-review' })
    assert.throws(() => lines.find(world), { code: 'not_found' })
  })
})
