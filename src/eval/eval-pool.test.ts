import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { setTimeout as delay } from 'node:timers/promises'
import { contextWith } from '../tool/test-context.ts'
import { defaultCatalog } from './capabilities/default-capabilities.ts'
import { EvalPool, type EvalPoolOptions } from './eval-pool.ts'
import { IsolateEngine } from './host/isolate-engine.ts'

function pool(options: Partial<EvalPoolOptions> = {}): EvalPool {
  return new EvalPool({
    engine: () => new IsolateEngine(),
    catalog: defaultCatalog(),
    settings: {
      http: { allow: [], maxResponseBytes: 1000, timeoutMs: 1000, testOnlyAllowLoopback: false },
      env: [],
      secrets: {},
      keyVariables: [],
      readVariable: () => undefined,
      toolCallBudget: 10,
    },
    ...options,
  })
}

const ctx = contextWith()

async function value(
  answer: Promise<{ outcome: { type: string; value?: string; message?: string } }>,
) {
  const { outcome } = await answer
  assert.equal(outcome.type, 'value', outcome.message)
  return outcome.value
}

describe('EvalPool', () => {
  it('gives each owner its own sessions: a name never reaches another owner', async () => {
    await using sessions = pool()
    const alice = sessions.owner()
    const bob = sessions.owner()
    await alice.evaluate({ code: 'const secret = "alice"' }, ctx)
    assert.equal(await value(alice.evaluate({ code: 'secret' }, ctx)), 'alice')
    assert.equal(await value(bob.evaluate({ code: 'typeof secret' }, ctx)), 'undefined')
    assert.equal(
      await value(bob.evaluate({ code: 'typeof secret', session: 'default' }, ctx)),
      'undefined',
    )
    await alice.evaluate({ code: 'const other = 1', session: 'second' }, ctx)
    assert.equal(await value(alice.evaluate({ code: 'typeof other' }, ctx)), 'undefined')
  })

  it('runs the evals of one session one after another', async () => {
    await using sessions = pool()
    const owner = sessions.owner()
    await owner.evaluate({ code: 'let log = []' }, ctx)
    await Promise.all([
      owner.evaluate({ code: 'log.push("a"); for (let i = 0; i < 1e6; i++);' }, ctx),
      owner.evaluate({ code: 'log.push("b")' }, ctx),
    ])
    assert.equal(await value(owner.evaluate({ code: 'log.join()' }, ctx)), 'a,b')
  })

  it('ends an idle session and says so at its next eval', async () => {
    await using sessions = pool({ idleTimeoutMs: 50 })
    const owner = sessions.owner()
    await owner.evaluate({ code: 'const x = 1' }, ctx)
    await delay(200)
    assert.equal(sessions.liveSessions, 0)
    const answer = await owner.evaluate({ code: 'typeof x' }, ctx)
    assert.match(answer.sessionReset ?? '', /idle/)
    assert.equal(answer.outcome.type === 'value' && answer.outcome.value, 'undefined')
  })

  it('evicts the least recently used session at the cap, and that session says so', async () => {
    await using sessions = pool({ maxSessions: 2 })
    const owner = sessions.owner()
    await owner.evaluate({ code: 'const n = "one"', session: 'one' }, ctx)
    await owner.evaluate({ code: 'const n = "two"', session: 'two' }, ctx)
    await owner.evaluate({ code: 'n', session: 'one' }, ctx)
    await owner.evaluate({ code: 'const n = "three"', session: 'three' }, ctx)
    assert.equal(sessions.liveSessions, 2)
    assert.equal(await value(owner.evaluate({ code: 'n', session: 'one' }, ctx)), 'one')
    const evicted = await owner.evaluate({ code: 'typeof n', session: 'two' }, ctx)
    assert.match(evicted.sessionReset ?? '', /make room \(at most 2 sessions/)
  })

  it("ends an owner's sessions when it closes, and only its own", async () => {
    await using sessions = pool()
    const leaving = sessions.owner()
    const staying = sessions.owner()
    await leaving.evaluate({ code: '1' }, ctx)
    await staying.evaluate({ code: 'const here = 1' }, ctx)
    await leaving.close()
    assert.equal(sessions.liveSessions, 1)
    await assert.rejects(leaving.evaluate({ code: '1' }, ctx), /closed/)
    assert.equal(await value(staying.evaluate({ code: 'here' }, ctx)), '1')
  })

  it('restarts a sandbox that died; an idle session says so at its next eval', async () => {
    await using sessions = pool()
    const owner = sessions.owner()
    await owner.evaluate({ code: 'const gone = 1' }, ctx)
    const { pid } = await (sessions.engine() as IsolateEngine).stats()
    process.kill(pid ?? 0, 'SIGKILL')
    await delay(300)
    const next = await owner.evaluate({ code: 'typeof gone' }, ctx)
    assert.match(next.sessionReset ?? '', /sandbox restarted/)
    assert.equal(next.outcome.type === 'value' && next.outcome.value, 'undefined')
  })

  it('tells a session that lost its state to a memory limit, at the next eval', async () => {
    await using sessions = pool({ memoryLimitMb: 32 })
    const owner = sessions.owner()
    await owner.evaluate({ code: 'const before = 1' }, ctx)
    const over = await owner.evaluate(
      { code: 'const all = []; while (true) all.push([all.length])' },
      ctx,
    )
    assert.equal(over.outcome.type === 'error' && over.outcome.code, 'memory_limit')
    const next = await owner.evaluate({ code: 'typeof before' }, ctx)
    assert.match(next.sessionReset ?? '', /out of memory/)
  })
})
