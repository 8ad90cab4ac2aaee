import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { RunLifecycleEvent } from '../ports/run-lifecycle.ts'
import type { RunRecord } from '../store/run-record.ts'
import { Roster } from './roster.ts'
import { runtimeFixture } from './test-runtime.ts'

const roster = Roster.of([
  { id: 'fast', program: { kind: 'scripted', reply: 'fast' } },
  { id: 'slow', program: { kind: 'scripted', delayMs: 600_000, reply: 'slow' } },
])

describe('AgentRuntime.watchRuns', () => {
  it('a snapshot of the Runs already running, then start, cancel request and finish in order; finished only once the row is terminal', async (t) => {
    const { runtime, store } = await runtimeFixture(t)
    const slow = await runtime.hire(roster, 'slow', { task: 'wait' })
    const events: RunLifecycleEvent[] = []
    // What the store held for a Run when `finished` was told, read at that instant.
    const rowsWhenFinished = new Map<string, Promise<RunRecord | undefined>>()
    const unwatch = runtime.watchRuns((event) => {
      events.push(event)
      if (event.type === 'run/finished')
        rowsWhenFinished.set(event.runId, store.getRun(event.runId))
    })
    assert.deepEqual(events, [
      {
        type: 'runs/snapshot',
        runs: [{ runId: slow.id, agentId: 'slow', parentId: undefined, state: 'running' }],
      },
    ])

    const fast = await runtime.hire(roster, 'fast', { task: 'go' })
    assert.deepEqual(events.at(-1), {
      type: 'run/started',
      runId: fast.id,
      agentId: 'fast',
      parentId: undefined,
    })
    await fast.result()
    await runtime.cancel(slow.id)
    unwatch()
    await (await runtime.hire(roster, 'fast', { task: 'unwatched' })).result()

    assert.deepEqual(
      events.slice(1).map((event) => [event.type, 'runId' in event ? event.runId : '']),
      [
        ['run/started', fast.id],
        ['run/finished', fast.id],
        ['run/cancel-requested', slow.id],
        ['run/finished', slow.id],
      ],
    )
    assert.deepEqual(
      events.filter((event) => event.type === 'run/finished').map((event) => event.status),
      ['completed', 'cancelled'],
    )
    for (const [id, row] of rowsWhenFinished) {
      const status = (await row)?.status
      assert.ok(status === 'completed' || status === 'cancelled', `Run ${id} was ${status}`)
    }
    assert.equal(rowsWhenFinished.size, 2)
  })

  it('a watcher that throws stops neither the Run nor the other watchers', async (t) => {
    const { runtime } = await runtimeFixture(t)
    const seen: string[] = []
    runtime.watchRuns(() => {
      throw new Error('a broken watcher')
    })
    runtime.watchRuns((event) => seen.push(event.type))
    const result = await (await runtime.hire(roster, 'fast', { task: 'go' })).result()
    assert.equal(result.status, 'completed')
    assert.deepEqual(seen, ['runs/snapshot', 'run/started', 'run/finished'])
  })
})
