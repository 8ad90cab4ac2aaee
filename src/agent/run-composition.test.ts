import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { join, map, observer, race } from './run-composition.ts'
import { Roster } from './roster.ts'
import { runtimeFixture } from './test-runtime.ts'

const roster = Roster.of([
  { id: 'fast', program: { kind: 'scripted', delayMs: 10, reply: 'fast' } },
  { id: 'slow', program: { kind: 'scripted', delayMs: 5000, reply: 'slow' } },
  { id: 'medium', program: { kind: 'scripted', delayMs: 2000, reply: 'medium' } },
  { id: 'reviewer', program: { kind: 'scripted', result: { review: 'claim' } } },
  { id: 'echoer', program: { kind: 'echo' } },
])

describe('composition of Runs', () => {
  it('a race of fast against slow, 10 times: the loser is cancelled and settled every time', async (t) => {
    const { runtime, store, lines } = await runtimeFixture(t)
    for (let round = 0; round < 10; round += 1) {
      const fast = await runtime.hire(roster, 'fast', { task: round })
      const slow = await runtime.hire(roster, 'slow', { task: round })
      const winner = await race([slow, fast])
      assert.equal(winner.id, fast.id)
      assert.equal(winner.status === 'completed' ? winner.value : winner.status, 'fast')
      const loser = await slow.observe()
      assert.deepEqual(
        [loser.status, loser.settlementStatus, loser.settlementReason],
        ['cancelled', 'discarded', 'cancelled'],
        `round ${round}`,
      )
      assert.equal(runtime.activeRuns, 0, 'the race waited for the loser to stop')
    }
    assert.deepEqual(await store.listRuns({ status: 'running' }), [])
    assert.equal((await store.listRuns({ status: 'cancelled' })).length, 10)
    assert.deepEqual(lines.forks(), [], 'every world is gone')
  })

  it('a passive observer that loses a race does not cancel the shared Run', async (t) => {
    const { runtime } = await runtimeFixture(t)
    const shared = await runtime.hire(roster, 'medium', { task: 'x' })
    const fast = await runtime.hire(roster, 'fast', { task: 'x' })
    const winner = await race([observer(shared), fast])
    assert.equal(winner.id, fast.id)
    assert.equal((await shared.observe()).status, 'running', 'the shared Run goes on')
    const result = await shared.result()
    assert.equal(result.status, 'completed')
    assert.equal(result.settlementStatus, 'merged')
  })

  it('aborting one passive wait leaves the Run and the other waits alone', async (t) => {
    const { runtime } = await runtimeFixture(t)
    const handle = await runtime.hire(roster, 'medium', { task: 'x' })
    const abandoned = new AbortController()
    const first = handle.result({ signal: abandoned.signal })
    const second = handle.result()
    abandoned.abort()
    await assert.rejects(first, { code: 'cancelled' })
    assert.equal((await second).status, 'completed')
  })

  it("aborting the owner's wait cancels the Run and answers its final result", async (t) => {
    const { runtime } = await runtimeFixture(t)
    const handle = await runtime.hire(roster, 'slow', { task: 'x' })
    const owner = new AbortController()
    const waiting = handle.ownedResult({ signal: owner.signal })
    owner.abort()
    const result = await waiting
    assert.deepEqual([result.status, result.settlementStatus], ['cancelled', 'discarded'])
  })

  it('join answers every result in order', async (t) => {
    const { runtime } = await runtimeFixture(t)
    const results = await join([
      await runtime.hire(roster, 'echoer', { task: 'evidence' }),
      await runtime.hire(roster, 'reviewer', { task: 'check' }),
    ])
    assert.deepEqual(
      results.map((result) => (result.status === 'completed' ? result.value : result.status)),
      ['evidence', { review: 'claim' }],
    )
  })

  it('map runs at most `concurrency` at once and keeps the order', async (t) => {
    const { runtime } = await runtimeFixture(t)
    let running = 0
    let most = 0
    const values = await map(
      ['a', 'b', 'c', 'd', 'e'],
      async (task, signal) => {
        running += 1
        most = Math.max(most, running)
        try {
          const handle = await runtime.hire(roster, 'echoer', { task })
          const result = await handle.ownedResult({ signal })
          return result.status === 'completed' ? result.value : result.status
        } finally {
          running -= 1
        }
      },
      { concurrency: 2 },
    )
    assert.deepEqual(values, ['a', 'b', 'c', 'd', 'e'])
    assert.equal(most, 2)
    await assert.rejects(
      map([1], async () => 1, { concurrency: 0 }),
      /concurrency/,
    )
  })
})
