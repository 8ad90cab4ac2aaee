/**
 * One connection's load must not cost another connection its sessions or its answers: a
 * connection floods the shared sandbox (sixteen evals in sixteen sessions, each writing two
 * 32 MiB strings to a protected path at once, as a security test did, and 8 MiB that reach the
 * server), while one other
 * connection's session, made first and then left idle (so it is the least recently used), keeps
 * its definitions, and another connection gets every answer within a bound, while the flood
 * still runs. The controls show
 * the flood is real: its data crossed (each write was refused by the path policy), it ran only
 * its share at once and queued the rest, and it filled the server's sessions (its own oldest
 * was ended for room).
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { setTimeout as delay } from 'node:timers/promises'
import type { EvalAnswer } from '../ports/code-evaluator.ts'
import { createEvalSandbox } from '../workshop/eval-sandbox.ts'
import { evalWorkshop } from './capabilities/test-eval-workshop.ts'
import { DEFAULT_MAX_SESSIONS, DEFAULT_OWNER_RUNNING_EVALS } from './eval-limits.ts'
import type { IsolateEngine } from './host/isolate-engine.ts'

/** The file the read flood reads, over and over. */
const BIG_FILE_BYTES = 8 * 1024 * 1024
const READ_ROUNDS = 2
const READS_AT_ONCE = 2
/** Each eval of the read flood: rounds of reads at once, every answer a large reply. */
const READ_FLOOD_CODE = `
  let total = 0
  for (let round = 0; round < ${READ_ROUNDS}; round++) {
    const texts = await Promise.all(Array.from({ length: ${READS_AT_ONCE} }, () => fs.readFile('big.txt')))
    for (const text of texts) total += text.length
  }
  total
`

/**
 * The longest another connection's eval may take while the flood runs: well under the minute a
 * ping may go unanswered, with room for a machine busy with other work (the flood is CPU-bound,
 * and the isolates share a thread per core). Each answer must also come in well before the flood
 * ends (`assertNotStarved`), which is the starving this guards against, however slow the machine.
 */
const VICTIM_ANSWER_MS = 15_000

/** Every answer came in while the flood ran, each taking less than half of the flood's time. */
function assertNotStarved(asked: readonly { readonly ms: number }[], floodMs: number): void {
  assert.ok(asked.length >= 3, `asked during the flood (${asked.length} times)`)
  for (const answer of asked) {
    assert.ok(answer.ms < VICTIM_ANSWER_MS, `an answer took ${Math.round(answer.ms)} ms`)
    assert.ok(
      answer.ms < floodMs / 2,
      `an answer took ${Math.round(answer.ms)} ms of the flood's ${Math.round(floodMs)} ms`,
    )
  }
}
const FLOOD_EVALS = DEFAULT_MAX_SESSIONS
// The security test's writes (32 MiB exactly: refused inside the isolate, by their JSON's few
// characters over the limit of one call's arguments, after the work of making them) and one of
// 8 MiB that crosses to the server and is refused there by the path policy.
const FLOOD_CODE = `
  const huge = 'x'.repeat(32 * 1024 * 1024)
  const writes = await Promise.allSettled([
    fs.writeFile('.git/hooks/a', huge),
    fs.writeFile('.git/hooks/b', huge),
    fs.writeFile('.git/hooks/c', 'y'.repeat(8 * 1024 * 1024)),
  ])
  writes.map((write) => write.status === 'rejected' ? write.reason.code ?? write.reason.name : 'written').join()
`

describe('fairness between the connections of one sandbox', () => {
  it('a flooding connection queues its own evals; the others keep their sessions and get answers in time', async () => {
    await using fixture = await evalWorkshop()
    await using pool = createEvalSandbox(fixture.workshop.config, fixture.workshop.toolset)
    const ctx = fixture.workshop.context()
    const value = (answer: EvalAnswer): string =>
      answer.outcome.type === 'value' ? answer.outcome.value : answer.outcome.message
    // One connection leaves its session idle through the flood (so it is the least recently
    // used); another keeps asking.
    const idle = pool.owner()
    const asking = pool.owner()
    const flooder = pool.owner()
    assert.equal(value(await idle.evaluate({ code: 'const kept = 42; kept' }, ctx)), '42')
    assert.equal(value(await asking.evaluate({ code: 'const mine = 7; mine' }, ctx)), '7')
    const { pid } = await (pool.engine() as IsolateEngine).stats()

    let flooding = true
    let peakRunning = 0
    const watch = setInterval(() => {
      peakRunning = Math.max(peakRunning, flooder.turns.used)
    }, 5)
    const floodStarted = performance.now()
    const flood = Promise.all(
      Array.from({ length: FLOOD_EVALS }, (_, index) =>
        flooder.evaluate({ code: FLOOD_CODE, session: `flood-${index}` }, ctx),
      ),
    ).finally(() => {
      flooding = false
      clearInterval(watch)
    })
    const asked: { ms: number; value: string; reset: string | undefined }[] = []
    while (flooding) {
      const started = performance.now()
      const answer = await asking.evaluate({ code: 'mine' }, ctx)
      asked.push({
        ms: performance.now() - started,
        value: value(answer),
        reset: answer.sessionReset,
      })
      await delay(100)
    }
    const floods = await flood
    const floodMs = performance.now() - floodStarted

    for (const answer of asked) {
      assert.deepEqual(
        { value: answer.value, reset: answer.reset },
        { value: '7', reset: undefined },
      )
    }
    assertNotStarved(asked, floodMs)
    const afterwards = await idle.evaluate({ code: 'kept' }, ctx)
    assert.deepEqual([value(afterwards), afterwards.sessionReset], ['42', undefined])
    assert.equal((await (pool.engine() as IsolateEngine).stats()).pid, pid, 'the same sandbox')

    // The controls: the data crossed and was refused by policy, the flood ran its share at once
    // and queued the rest, and it filled the server (its own oldest session was ended for room).
    for (const answer of floods) assert.equal(value(answer), 'RangeError,RangeError,protected_path')
    const traffic = (pool.engine() as IsolateEngine).traffic()
    assert.ok(
      (traffic?.fromSandbox.largeBytes ?? 0) >= FLOOD_EVALS * 8 * 1024 * 1024,
      'every 8 MiB write crossed on the large lane',
    )
    assert.equal(peakRunning, DEFAULT_OWNER_RUNNING_EVALS)
    const again = await flooder.evaluate({ code: '1', session: 'flood-0' }, ctx)
    assert.match(again.sessionReset ?? '', /make room/)
  })
})

describe('fairness on the pipe between the server and the sandbox', () => {
  it("one connection's flood of large file reads neither holds back another's evals nor gets the sandbox killed", async () => {
    await using fixture = await evalWorkshop({ files: { 'big.txt': 'r'.repeat(BIG_FILE_BYTES) } })
    await using pool = createEvalSandbox(fixture.workshop.config, fixture.workshop.toolset)
    const ctx = fixture.workshop.context()
    const engine = pool.engine() as IsolateEngine
    const value = (answer: EvalAnswer): string =>
      answer.outcome.type === 'value' ? answer.outcome.value : answer.outcome.message
    const asking = pool.owner()
    const flooder = pool.owner()
    assert.equal(value(await asking.evaluate({ code: 'const mine = 7; mine' }, ctx)), '7')
    const { pid } = await engine.stats()
    const before = engine.traffic()?.toSandbox.largeChars ?? 0

    let flooding = true
    const floodStarted = performance.now()
    const flood = Promise.all(
      Array.from({ length: DEFAULT_OWNER_RUNNING_EVALS }, (_, index) =>
        flooder.evaluate({ code: READ_FLOOD_CODE, session: `reader-${index}` }, ctx),
      ),
    ).finally(() => {
      flooding = false
    })
    const asked: { ms: number; value: string; reset: string | undefined; waiting: number }[] = []
    while (flooding) {
      const started = performance.now()
      const answer = await asking.evaluate({ code: 'mine' }, ctx)
      asked.push({
        ms: performance.now() - started,
        value: value(answer),
        reset: answer.sessionReset,
        // Large replies still waiting for the pipe when this small answer came back.
        waiting: engine.traffic()?.toSandbox.queued ?? 0,
      })
      await delay(50)
    }
    const floods = await flood
    const floodMs = performance.now() - floodStarted

    for (const answer of asked) {
      assert.deepEqual(
        { value: answer.value, reset: answer.reset },
        { value: '7', reset: undefined },
      )
    }
    assertNotStarved(asked, floodMs)
    assert.equal((await engine.stats()).pid, pid, 'the same sandbox')

    // The controls: every read was answered in full, the replies crossed on the large lane and
    // queued there, and at least one small answer came back while large replies still waited.
    const expected = String(READ_ROUNDS * READS_AT_ONCE * BIG_FILE_BYTES)
    for (const answer of floods) assert.equal(value(answer), expected)
    const traffic = engine.traffic()
    const floodChars = DEFAULT_OWNER_RUNNING_EVALS * READ_ROUNDS * READS_AT_ONCE * BIG_FILE_BYTES
    assert.ok((traffic?.toSandbox.largeChars ?? 0) - before >= floodChars, 'the replies crossed')
    assert.ok((traffic?.toSandbox.peakQueued ?? 0) >= 2, 'large replies waited their turn')
    assert.ok(
      asked.some((answer) => answer.waiting > 0),
      `a small answer passed waiting large replies (waiting: ${asked.map((answer) => answer.waiting).join(',')})`,
    )
  })
})
