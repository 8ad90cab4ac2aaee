import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { EitriError } from '../errors/eitri-error.ts'
import { ByteBudget } from './byte-budget.ts'

const never = new AbortController().signal

describe('ByteBudget', () => {
  it('lets calls hold bytes up to its limit; the next waits its turn, first come first served', async () => {
    const budget = new ByteBudget(100)
    const first = budget.forCall(never)
    await first.reserve(60)
    const order: string[] = []
    const second = budget.forCall(never)
    const third = budget.forCall(never)
    const waiting = [
      second.reserve(50).then(() => order.push('second')),
      third.reserve(10).then(() => order.push('third')),
    ]
    await new Promise((resolve) => setImmediate(resolve))
    assert.deepEqual(order, [], 'the small one does not jump the queue')
    first.releaseAll()
    await Promise.all(waiting)
    assert.deepEqual(order, ['second', 'third'])
    assert.equal(budget.used, 60)
    assert.equal(budget.peak, 60)
  })

  it('draws on its parent: sessions together never hold more than the server', async () => {
    const server = new ByteBudget(100)
    const one = new ByteBudget(80, server)
    const two = new ByteBudget(80, server)
    await one.forCall(never).reserve(80)
    const later = two.forCall(never)
    let done = false
    const pending = later.reserve(30).then(() => (done = true))
    await new Promise((resolve) => setImmediate(resolve))
    assert.equal(done, false)
    assert.equal(server.used, 80)
    one.release(80)
    await pending
    assert.equal(server.used, 30)
    assert.equal(one.used, 0)
  })

  it('refuses what could never fit, and gives up a wait when the eval ends', async () => {
    const budget = new ByteBudget(100)
    await assert.rejects(budget.forCall(never).reserve(101), (error: unknown) => {
      assert.ok(EitriError.isInstance(error))
      assert.equal(error.code, 'limit_exceeded')
      return true
    })
    await budget.forCall(never).reserve(100)
    const ended = new AbortController()
    const waiting = budget.forCall(ended.signal).reserve(1)
    ended.abort()
    await assert.rejects(waiting, (error: unknown) => {
      assert.ok(EitriError.isInstance(error))
      assert.equal(error.code, 'cancelled')
      return true
    })
    assert.equal(budget.used, 100)
  })

  it('never lets two calls wait on each other while holding: a call that needs more gives back first', async () => {
    const budget = new ByteBudget(100)
    const one = budget.forCall(never)
    const two = budget.forCall(never)
    await one.reserve(50)
    await two.reserve(50)
    // Each now needs 80 in all: were they to wait holding 50, neither would ever go on.
    const both = Promise.all([
      one.reserve(80).then(() => one.releaseAll()),
      two.reserve(80).then(() => two.releaseAll()),
    ])
    const settled = await Promise.race([
      both.then(() => 'done'),
      new Promise((resolve) => setTimeout(resolve, 1_000, 'deadlocked')),
    ])
    assert.equal(settled, 'done')
    assert.equal(budget.used, 0)
  })

  it('counts an answer larger than reserved, and gives everything back once', async () => {
    const budget = new ByteBudget(100)
    const call = budget.forCall(never)
    await call.reserve(10)
    call.atLeast(150)
    assert.equal(budget.used, 150)
    call.releaseAll()
    call.releaseAll()
    assert.equal(budget.used, 0)
  })
})
