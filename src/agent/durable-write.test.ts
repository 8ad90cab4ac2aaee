import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { EitriError } from '../errors/eitri-error.ts'
import { durableWrite, isRetryableStoreError } from './durable-write.ts'

/** A write that fails `failures` times with `error`, then answers 'landed'. */
function flaky(failures: number, error: () => unknown) {
  const attempts: number[] = []
  const write = async (): Promise<string> => {
    attempts.push(performance.now())
    if (attempts.length <= failures) throw error()
    return 'landed'
  }
  return { write, attempts }
}

const busy = () => new EitriError('store_unavailable', 'The store stayed busy.')

describe('durableWrite', () => {
  it('retries a refused write with pauses from 25 ms doubling, until it lands', async () => {
    const { write, attempts } = flaky(4, busy)
    assert.equal(await durableWrite(write), 'landed')
    assert.equal(attempts.length, 5)
    const pauses = attempts.slice(1).map((time, index) => time - (attempts[index] ?? 0))
    for (const [index, expected] of [25, 50, 100, 200].entries()) {
      assert.ok((pauses[index] ?? 0) >= expected - 2, `pause ${index}: ${String(pauses[index])}`)
    }
  })

  it('never pauses longer than the cap', async () => {
    const { write, attempts } = flaky(6, busy)
    await durableWrite(write, { firstDelayMs: 1, maxDelayMs: 4 })
    const total = (attempts.at(-1) ?? 0) - (attempts[0] ?? 0)
    assert.ok(total < 200, `took ${total} ms`)
  })

  it('passes on at once what waiting cannot change', async () => {
    for (const error of [
      new EitriError('conflict', 'Run r already ended as failed.'),
      new EitriError('not_found', 'No Run with id r.'),
      new EitriError('not_available', 'The store is closed.'),
      new TypeError('store.finishRun is not a function'),
    ]) {
      const { write, attempts } = flaky(1, () => error)
      await assert.rejects(durableWrite(write), (thrown) => thrown === error)
      assert.equal(attempts.length, 1)
    }
  })

  it('retries what a database driver throws raw (a cut connection, an I/O error)', () => {
    assert.equal(
      isRetryableStoreError(Object.assign(new Error('terminating connection'), { code: '57P01' })),
      true,
    )
    assert.equal(
      isRetryableStoreError(Object.assign(new Error('disk I/O error'), { errcode: 10 })),
      true,
    )
    assert.equal(isRetryableStoreError(busy()), true)
    assert.equal(isRetryableStoreError(new EitriError('cancelled', 'stop')), false)
  })

  it('stops when cancelled, saying the write did not land', async () => {
    const controller = new AbortController()
    const { write, attempts } = flaky(Number.POSITIVE_INFINITY, busy)
    setTimeout(() => controller.abort(), 100)
    await assert.rejects(durableWrite(write, { signal: controller.signal }), (error: unknown) => {
      assert.ok(EitriError.isInstance(error))
      assert.equal(error.code, 'cancelled')
      assert.match(error.message, /did not land/)
      assert.equal((error.cause as EitriError).code, 'store_unavailable')
      return true
    })
    assert.ok(attempts.length >= 2 && attempts.length <= 4, String(attempts.length))
  })

  it('logs the first failure, then at most once per period', async () => {
    const messages: string[] = []
    const { write } = flaky(5, busy)
    await durableWrite(write, { firstDelayMs: 1, log: (message) => messages.push(message) })
    assert.equal(messages.length, 1)
    assert.match(messages[0] ?? '', /failed 1 time\(s\); retrying in 1 ms.*stayed busy/)
    const all: string[] = []
    await durableWrite(flaky(3, busy).write, {
      firstDelayMs: 1,
      logEveryMs: 0,
      log: (message) => all.push(message),
    })
    assert.equal(all.length, 3)
  })
})
