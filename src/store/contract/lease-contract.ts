/**
 * @module store/contract/lease-contract
 * The contract of Run leases, the sweep of interrupted Runs, and cancel requests: a Run whose
 * owner stopped renewing ends as `failed`/`interrupted`; a Run whose owner lives, or that
 * finished, never does.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { setTimeout as delay } from 'node:timers/promises'
import { MIGRATIONS } from '../migrations.ts'
import { openDriver, openStore } from '../open-store.ts'
import { migrate } from '../sql/migrate.ts'
import type { Store } from '../store.ts'
import type { StoreHarness } from './store-harness.ts'
import { rejectsWith } from './task-contract.ts'

const TTL = 15_000

/** A clock that moves only when told, from 2026-01-01. */
function manualClock(): { now: () => Date; advance: (ms: number) => void } {
  let time = Date.UTC(2026, 0, 1)
  return { now: () => new Date(time), advance: (ms) => (time += ms) }
}

async function clockedStore(
  harness: StoreHarness,
): Promise<{ store: Store; url: string; advance: (ms: number) => void }> {
  const url = await harness.freshUrl()
  const clock = manualClock()
  const store = await openStore(url, { dependencies: { now: clock.now } })
  return { store, url, advance: clock.advance }
}

const ids = (runs: readonly { readonly id: string }[]): string[] => runs.map((run) => run.id)

/** Registers the lease contract. */
export function leaseContract(harness: StoreHarness): void {
  void describe('run leases', () => {
    void it('holds a Run from admission until it is settled', async () => {
      const { store } = await clockedStore(harness)
      await using _ = store
      const admitted = await store.admitRun({ id: 'r', lease: { owner: 'a', ttlMs: TTL } })
      assert.equal(admitted.leaseOwner, 'a')
      assert.equal(admitted.leaseExpiresAt, '2026-01-01T00:00:15.000Z')
      // Ended, its settlement may wait for a person: its process holds it on.
      const done = await store.finishRun('r', { status: 'completed' })
      assert.equal(done.leaseOwner, 'a')
      assert.deepEqual(await store.renewRunLeases({ owner: 'a', ttlMs: TTL }), ['r'])
      const settled = await store.settleRun('r', { status: 'merged', reason: 'automatic' })
      assert.equal('leaseOwner' in settled, false)
      assert.equal('leaseExpiresAt' in settled, false)
      assert.deepEqual(await store.renewRunLeases({ owner: 'a', ttlMs: TTL }), [])
      await rejectsWith(
        store.admitRun({ id: 'x', lease: { owner: '', ttlMs: TTL } }),
        'invalid_input',
      )
      await rejectsWith(
        store.admitRun({ id: 'y', lease: { owner: 'a', ttlMs: 0 } }),
        'invalid_input',
      )
      assert.equal(await store.getRun('x'), undefined)
    })

    void it('sweeps a Run whose journal ends on an intent with no result as unknown-outcome', async () => {
      const { store, advance } = await clockedStore(harness)
      await using _ = store
      for (const id of ['mid-call', 'after-call', 'no-calls']) {
        await store.admitRun({ id, lease: { owner: 'a', ttlMs: TTL } })
      }
      await store.appendRunEvents('mid-call', [
        { type: 'model-call-intent', data: { step: 0 } },
        { type: 'model-call-result', data: { step: 0 } },
        { type: 'tool-call-intent', data: { step: 0 } },
        { type: 'note' },
      ])
      await store.appendRunEvents('after-call', [
        { type: 'tool-call-intent', data: { step: 0 } },
        { type: 'tool-call-result', data: { step: 0 } },
      ])
      advance(TTL + 1)
      const swept = await store.sweepInterruptedRuns()
      const reasons = Object.fromEntries(swept.map((run) => [run.id, run.reason]))
      assert.deepEqual(reasons, {
        'after-call': 'interrupted',
        'mid-call': 'unknown-outcome',
        'no-calls': 'interrupted',
      })
      const midCall = swept.find((run) => run.id === 'mid-call')
      assert.match(
        (midCall?.error as { message: string }).message,
        /ends on a tool-call-intent with no result.*not re-run/,
      )
      const journal = await store.listRunEvents('mid-call')
      assert.deepEqual(journal.at(-1)?.data, { status: 'failed', reason: 'unknown-outcome' })
    })

    void it('sweeps a lease not renewed, once, and never a renewed or finished Run', async () => {
      const { store, advance } = await clockedStore(harness)
      await using _ = store
      for (const id of ['dead', 'live', 'done', 'wait', 'gone']) {
        await store.admitRun({ id, lease: { owner: id === 'live' ? 'b' : 'a', ttlMs: TTL } })
      }
      await store.finishRun('done', { status: 'completed', value: 1 })
      await store.finishRun('wait', { status: 'waiting', reason: 'budget-exhausted' })
      await store.finishRun('gone', { status: 'cancelled' })
      advance(TTL)
      // At the instant of expiry the lease still holds.
      assert.deepEqual(await store.sweepInterruptedRuns(), [])
      assert.deepEqual(await store.renewRunLeases({ owner: 'b', ttlMs: TTL }), ['live'])
      advance(1)
      const swept = await store.sweepInterruptedRuns()
      assert.deepEqual(ids(swept), ['dead'])
      const [dead] = swept
      assert.equal(dead?.status, 'failed')
      assert.equal(dead?.reason, 'interrupted')
      assert.equal(dead?.endedAt, '2026-01-01T00:00:15.001Z')
      assert.equal(dead?.leaseOwner, undefined)
      assert.match((dead?.error as { message: string }).message, /\(a\) stopped renewing/)
      assert.deepEqual(await store.getRun('dead'), dead)
      const journal = await store.listRunEvents('dead')
      assert.deepEqual(
        journal.map((event) => [event.type, event.data]),
        [['finished', { status: 'failed', reason: 'interrupted' }]],
      )
      assert.equal((await store.getRun('live'))?.status, 'running')
      assert.equal((await store.getRun('done'))?.status, 'completed')
      assert.equal((await store.getRun('wait'))?.status, 'waiting')
      assert.equal((await store.getRun('gone'))?.status, 'cancelled')
      // Once is enough: a second sweep finds nothing, a late heartbeat revives nothing, and the
      // owner's own finish is refused, so nobody is told two endings.
      assert.deepEqual(await store.sweepInterruptedRuns(), [])
      assert.deepEqual(await store.renewRunLeases({ owner: 'a', ttlMs: TTL }), [])
      assert.match(
        await rejectsWith(store.finishRun('dead', { status: 'completed' }), 'conflict'),
        /already ended as failed/,
      )
      assert.equal((await store.listRunEvents('dead')).length, 1)
    })

    void it('keeps for review an ended Run whose process died before settling it', async () => {
      const { store, advance } = await clockedStore(harness)
      await using _ = store
      for (const id of ['asking', 'alive', 'settled', 'swept']) {
        await store.admitRun({ id, lease: { owner: id === 'alive' ? 'b' : 'a', ttlMs: TTL } })
      }
      // 'asking' ended and its process died while its merge was asked about; 'alive' is being
      // asked about by a live process; 'settled' settled; 'swept' died running.
      for (const id of ['asking', 'alive', 'settled']) {
        await store.finishRun(id, { status: 'completed', value: id })
      }
      await store.settleRun('settled', { status: 'merged', reason: 'automatic' })
      advance(TTL)
      assert.deepEqual(await store.renewRunLeases({ owner: 'b', ttlMs: TTL }), ['alive'])
      advance(1)
      // The answer lists the Runs it ended; the one kept for review had ended already.
      assert.deepEqual(ids(await store.sweepInterruptedRuns()), ['swept'])
      const asking = await store.getRun('asking')
      assert.equal(asking?.status, 'completed')
      assert.equal(asking?.settlementStatus, 'review')
      assert.match(asking?.settlementReason ?? '', /^settlement-interrupted: its process \(a\)/)
      assert.equal(asking?.leaseOwner, undefined)
      assert.equal((await store.getRun('alive'))?.settlementStatus, 'open')
      assert.equal((await store.getRun('settled'))?.settlementStatus, 'merged')
      // A Run swept while running is kept for review too: nothing would settle it otherwise.
      const swept = await store.getRun('swept')
      assert.equal(swept?.settlementStatus, 'review')
      assert.match(swept?.settlementReason ?? '', /^interrupted: the Run's process stopped/)
      // No heartbeat revives it, and a person (or its process, late) settles it once.
      assert.deepEqual(await store.renewRunLeases({ owner: 'a', ttlMs: TTL }), [])
      await store.settleRun('asking', { status: 'discarded', reason: 'discarded-after-review' })
      await rejectsWith(
        store.settleRun('asking', { status: 'merged', reason: 'automatic' }),
        'conflict',
      )
    })

    void it('renews late but before a sweep, and keeps the Run', async () => {
      const { store, advance } = await clockedStore(harness)
      await using _ = store
      await store.admitRun({ id: 'r', lease: { owner: 'a', ttlMs: TTL } })
      advance(TTL * 2)
      assert.deepEqual(await store.renewRunLeases({ owner: 'a', ttlMs: TTL }), ['r'])
      assert.deepEqual(await store.sweepInterruptedRuns(), [])
      assert.equal((await store.getRun('r'))?.leaseExpiresAt, '2026-01-01T00:00:45.000Z')
    })

    void it('holds a Run nobody holds, and refuses one another owner holds', async () => {
      const { store } = await clockedStore(harness)
      await using _ = store
      await store.admitRun({ id: 'free' })
      await store.admitRun({ id: 'taken', lease: { owner: 'b', ttlMs: TTL } })
      const held = await store.holdRun('free', { owner: 'a', ttlMs: TTL })
      assert.equal(held.leaseOwner, 'a')
      assert.equal((await store.holdRun('free', { owner: 'a', ttlMs: 2 * TTL })).leaseOwner, 'a')
      assert.match(
        await rejectsWith(store.holdRun('taken', { owner: 'a', ttlMs: TTL }), 'conflict'),
        /held by b/,
      )
      await store.finishRun('free', { status: 'completed' })
      await rejectsWith(store.holdRun('free', { owner: 'a', ttlMs: TTL }), 'conflict')
      await rejectsWith(store.holdRun('nope', { owner: 'a', ttlMs: TTL }), 'not_found')
    })

    void it("releases only its own owner's Runs, which the next sweep ends", async () => {
      const { store } = await clockedStore(harness)
      await using _ = store
      await store.admitRun({ id: 'a1', lease: { owner: 'a', ttlMs: TTL } })
      await store.admitRun({ id: 'a2', lease: { owner: 'a', ttlMs: TTL } })
      await store.admitRun({ id: 'b1', lease: { owner: 'b', ttlMs: TTL } })
      assert.deepEqual(await store.releaseRunLeases('a', ['a2']), ['a2'])
      assert.deepEqual(await store.releaseRunLeases('a', ['b1']), [])
      assert.deepEqual(await store.releaseRunLeases('a'), ['a1', 'a2'])
      assert.equal((await store.getRun('b1'))?.leaseExpiresAt, '2026-01-01T00:00:15.000Z')
      // The store's clock has not moved: released means lapsed from the next instant on.
      assert.deepEqual(await store.sweepInterruptedRuns(), [])
    })

    void it('ends a running Run nobody ever held once it sat unchanged past the grace', async () => {
      const { store, advance } = await clockedStore(harness)
      await using _ = store
      await store.admitRun({ id: 'orphan' })
      advance(10_000)
      assert.deepEqual(await store.sweepInterruptedRuns(), [])
      advance(5_001)
      assert.deepEqual(ids(await store.sweepInterruptedRuns()), ['orphan'])
      await store.admitRun({ id: 'young' })
      advance(101)
      assert.deepEqual(ids(await store.sweepInterruptedRuns({ unleasedAfterMs: 100 })), ['young'])
      await rejectsWith(store.sweepInterruptedRuns({ unleasedAfterMs: -1 }), 'invalid_input')
    })
  })

  void describe('upgrading to leases', () => {
    void it('ends a Run left running before leases existed, after the grace', async () => {
      const url = await harness.freshUrl()
      const driver = await openDriver(url)
      await migrate(driver, MIGRATIONS.slice(0, 1))
      await driver.transaction('write', (transaction) =>
        transaction.run(
          `INSERT INTO runs (id, kind, caused_by, status, settlement_status, created_at, started_at, updated_at)
            VALUES ('old', 'agent-task', '[]', 'running', 'open', ?, ?, ?)`,
          ['2025-12-31T00:00:00.000Z', '2025-12-31T00:00:00.000Z', '2025-12-31T00:00:00.000Z'],
        ),
      )
      await driver.close()
      const clock = manualClock()
      await using store = await openStore(url, { dependencies: { now: clock.now } })
      assert.equal(await store.schemaVersion(), MIGRATIONS.length)
      const old = await store.getRun('old')
      assert.equal(old?.status, 'running')
      assert.equal(old !== undefined && 'leaseOwner' in old, false)
      assert.deepEqual(ids(await store.sweepInterruptedRuns()), ['old'])
    })
  })

  void describe('cancel requests', () => {
    void it('leaves a durable request for the owner, journaled once', async () => {
      const { store, url } = await clockedStore(harness)
      await store.admitRun({ id: 'r', lease: { owner: 'a', ttlMs: TTL } })
      await store.admitRun({ id: 'other', lease: { owner: 'b', ttlMs: TTL } })
      assert.deepEqual(await store.listCancelRequests('a'), [])
      const asked = await store.requestRunCancel('r', 'cli')
      assert.equal(asked.cancelRequestedBy, 'cli')
      assert.equal(asked.status, 'running')
      assert.deepEqual(await store.requestRunCancel('r', 'someone-else'), asked)
      await store.close()
      // Durable: another connection (another process) sees it.
      await using again = await openStore(url)
      assert.deepEqual(await again.listCancelRequests('a'), [
        { runId: 'r', at: asked.cancelRequestedAt, by: 'cli' },
      ])
      assert.deepEqual(await again.listCancelRequests('b'), [])
      assert.deepEqual(
        (await again.listRunEvents('r')).map((event) => [event.type, event.data]),
        [['cancel-requested', { by: 'cli' }]],
      )
      await again.finishRun('r', { status: 'cancelled' })
      assert.deepEqual(await again.listCancelRequests('a'), [])
      assert.equal((await again.getRun('r'))?.cancelRequestedBy, 'cli')
      await rejectsWith(again.requestRunCancel('r', 'cli'), 'conflict')
      await rejectsWith(again.requestRunCancel('nope', 'cli'), 'not_found')
      await rejectsWith(again.requestRunCancel('other', ' '), 'invalid_input')
    })
  })

  void describe('two owners on one store', () => {
    void it("never interrupt each other's live Runs, and end a dead owner's", async () => {
      // Real clock and two connections, as two processes have: each owner heartbeats and
      // sweeps concurrently with the other.
      const url = await harness.freshUrl()
      await using first = await openStore(url)
      await using second = await openStore(url)
      const ttlMs = 400
      const owners = [
        { store: first, owner: 'server-a', runs: ['a1', 'a2', 'a3'], alive: true },
        { store: second, owner: 'server-b', runs: ['b1', 'b2', 'b3'], alive: true },
      ]
      for (const { store, owner, runs } of owners) {
        for (const id of runs) await store.admitRun({ id, lease: { owner, ttlMs } })
      }
      const swept: string[] = []
      let running = true
      const loops = owners.map(async (side) => {
        while (running) {
          if (side.alive) await side.store.renewRunLeases({ owner: side.owner, ttlMs })
          swept.push(...ids(await side.store.sweepInterruptedRuns()))
          await delay(20)
        }
      })
      await delay(1_500)
      assert.deepEqual(swept, [], 'a live owner lost a Run')
      const [a] = owners
      if (a !== undefined) a.alive = false
      await delay(ttlMs + 300)
      running = false
      await Promise.all(loops)
      assert.deepEqual(swept.sort(), ['a1', 'a2', 'a3'])
      for (const id of ['b1', 'b2', 'b3']) {
        assert.equal((await second.getRun(id))?.status, 'running')
      }
      // Closing server-b's side releases its own Runs only.
      await second.admitRun({ id: 'b4', lease: { owner: 'server-b', ttlMs } })
      await first.admitRun({ id: 'a4', lease: { owner: 'server-a', ttlMs: 60_000 } })
      assert.deepEqual(await second.releaseRunLeases('server-b'), ['b1', 'b2', 'b3', 'b4'])
      await delay(5)
      assert.deepEqual(ids(await first.sweepInterruptedRuns()).sort(), ['b1', 'b2', 'b3', 'b4'])
      assert.equal((await first.getRun('a4'))?.status, 'running')
    })
  })
}
