import assert from 'node:assert/strict'
import { it } from 'node:test'
import { setTimeout as delay } from 'node:timers/promises'
import { SerialQueue } from './serial-queue.ts'

it('runs one piece at a time, in order; a failure fails its own caller only', async () => {
  const queue = new SerialQueue()
  const events: string[] = []
  const piece = (name: string, ms: number, fail = false) =>
    queue.run(async () => {
      events.push(`start ${name}`)
      await delay(ms)
      events.push(`end ${name}`)
      if (fail) throw new Error(name)
      return name
    })
  const results = await Promise.allSettled([piece('a', 30), piece('b', 1, true), piece('c', 1)])
  assert.deepEqual(events, ['start a', 'end a', 'start b', 'end b', 'start c', 'end c'])
  assert.deepEqual(
    results.map((result) => result.status),
    ['fulfilled', 'rejected', 'fulfilled'],
  )
  let later = false
  void queue.run(async () => {
    await delay(10)
    later = true
  })
  await queue.settled()
  assert.equal(later, true)
})
