import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import type { PrestartedJail } from './prestarted-jail.ts'
import { PrestartedJails } from './prestarted-jails.ts'

/** A stand-in for a jail started ahead: it says it is ready (or ends) when told. */
function fakeJail(key: string, point: string) {
  let settle: () => void = () => undefined
  const state: { signalled: boolean; ended: boolean; taken: boolean; owner?: string } = {
    signalled: false,
    ended: false,
    taken: false,
  }
  const jail = {
    key,
    point,
    started: new Promise<void>((resolve) => (settle = resolve)),
    get signalled() {
      return state.signalled
    },
    get ready() {
      return !state.ended
    },
    get ended() {
      return state.ended
    },
    get owner() {
      return state.owner
    },
    take: (sharer = '') => {
      state.taken = true
      state.owner ??= sharer
    },
    untake: () => (state.taken = false),
    discard: () => (state.ended = true),
  }
  return {
    jail: jail as unknown as PrestartedJail,
    ready: () => ((state.signalled = true), settle()),
    fail: () => ((state.ended = true), settle()),
  }
}

/** A refill of fake jails under key `k`: `made` lists them in the order `make` started them. */
function refill() {
  const made: ReturnType<typeof fakeJail>[] = []
  const jails = new PrestartedJails(() => undefined, { idleMs: 60_000, comesBackMs: 60_000 })
  const make = async () => {
    const fake = fakeJail('k', `p${made.length}`)
    made.push(fake)
    return fake.jail
  }
  return { made, jails, make }
}

const turn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve))

/** A refill whose first two jails said they are ready. */
async function twoReady() {
  const filled = refill()
  void filled.jails.prepare('k', filled.make)
  await turn()
  filled.made[0]?.ready()
  await turn()
  filled.made[1]?.ready()
  await turn()
  return filled
}

describe('jails started ahead (the refill)', () => {
  it('starts one at a time until one said it is ready, then side by side', async () => {
    const { made, jails, make } = refill()
    void jails.prepare('k', make)
    await turn()
    // Not known to start yet: the second waits for the first.
    assert.equal(made.length, 1)
    made[0]?.ready()
    await turn()
    assert.equal(made.length, 2)
    made[1]?.ready()
    await turn()
    // Both taken: they come back when their jobs end, so the refill waits for one of them.
    const first = jails.take('k')
    const second = jails.take('k')
    void jails.prepare('k', make)
    await turn()
    assert.equal(made.length, 2)
    if (first !== undefined) jails.giveBack(first)
    await turn()
    assert.equal(made.length, 2, 'one came back: none starts')
    assert.equal(jails.take('k'), first)
    // The other one's jail ended with its job: now one starts.
    void jails.prepare('k', make)
    if (second !== undefined) jails.lost(second)
    await turn()
    await turn()
    assert.equal(made.length, 3)
    jails.close()
  })

  it('starts one when every jail is out and none comes back in time', async () => {
    const made: ReturnType<typeof fakeJail>[] = []
    const jails = new PrestartedJails(() => undefined, { idleMs: 60_000, comesBackMs: 20 })
    const make = async () => {
      const fake = fakeJail('k', `p${made.length}`)
      made.push(fake)
      fake.ready()
      return fake.jail
    }
    await jails.prepare('k', make)
    assert.equal(made.length, 2)
    jails.take('k')
    jails.take('k')
    await jails.prepare('k', make)
    assert.equal(made.length, 3)
    assert.equal(jails.waiting, 1)
    jails.close()
  })

  it('takes back a jail whose job ended, first in line, unless enough wait or another key is wanted', async () => {
    const { made, jails, make } = await twoReady()
    const out = jails.take('k')
    assert.equal(out, made[0]?.jail)
    void jails.prepare('k', make)
    await turn()
    // One is out and comes back: no third starts beside the one that waits.
    assert.equal(made.length, 2)
    if (out !== undefined) jails.giveBack(out)
    assert.equal(jails.waiting, 2)
    assert.equal(jails.take('k'), out, 'the one given back is taken first')
    // Two wait already: a third given back is ended.
    if (out !== undefined) jails.giveBack(out)
    const extra = fakeJail('k', 'extra')
    extra.ready()
    jails.giveBack(extra.jail)
    assert.equal(jails.waiting, 2)
    assert.equal(out?.ended, false)
    assert.equal(extra.jail.ended, true)
    // Another key is wanted now: one given back for the old key is ended.
    const taken = jails.take('k')
    void jails.prepare('j', make)
    if (taken !== undefined) jails.giveBack(taken)
    assert.equal(taken?.ended, true)
    jails.close()
  })

  it("gives a jail that ran a sharer's job to that sharer only; a new one to any", async () => {
    const { jails } = await twoReady()
    const mine = jails.take('k', 'one')
    if (mine !== undefined) jails.giveBack(mine)
    const theirs = jails.take('k', 'two')
    assert.notEqual(theirs, mine)
    if (theirs !== undefined) jails.giveBack(theirs)
    assert.equal(jails.take('k', 'one'), mine)
    if (mine !== undefined) jails.giveBack(mine)
    assert.equal(jails.take('k', 'two'), theirs)
    if (theirs !== undefined) jails.giveBack(theirs)
    // A third sharer finds none of its own: it goes the old way, and the oldest makes room.
    assert.equal(jails.take('k', 'three'), undefined)
    assert.equal(jails.waiting, 1)
    assert.equal(theirs?.ended, true)
    jails.close()
  })

  it('stops the refill when a jail ends before it said it is ready', async () => {
    const { made, jails, make } = refill()
    void jails.prepare('k', make)
    await turn()
    made[0]?.ready()
    await turn()
    made[1]?.fail()
    await turn()
    // The failure is known: the next start refills one at a time again, and stops at a failure.
    jails.take('k')
    void jails.prepare('k', make)
    await turn()
    assert.equal(made.length, 3)
    made[2]?.fail()
    await turn()
    await turn()
    assert.equal(made.length, 3)
    jails.close()
  })
})
