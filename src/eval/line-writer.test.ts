import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { Writable } from 'node:stream'
import { setTimeout as delay } from 'node:timers/promises'
import { LineWriter } from './line-writer.ts'

/** A slow pipe: each write takes a few milliseconds; the names of its lines in arrival order. */
function slowPipe(log: string[], lane: string): Writable {
  return new Writable({
    highWaterMark: 16,
    write(chunk: Buffer, _encoding, callback) {
      for (const line of chunk.toString('utf8').split('\n')) {
        if (line !== '') log.push(`${lane}:${(JSON.parse(line) as { name: string }).name}`)
      }
      setTimeout(callback, 5)
    },
  })
}

/** A message named `name` of about `chars` characters of JSON, counting when it becomes JSON. */
function message(name: string, chars: number, rendered: string[] = []): object {
  const padding = '.'.repeat(chars)
  return {
    name,
    padding,
    toJSON() {
      rendered.push(name)
      return { name, padding }
    },
  }
}

describe('LineWriter', () => {
  it('sends small messages at once on their own lane, and large ones in turns between keys', async () => {
    const log: string[] = []
    const writer = new LineWriter(
      { small: slowPipe(log, 'small'), large: slowPipe(log, 'large') },
      { smallLineChars: 100 },
    )
    const written: string[] = []
    const write = (name: string, chars: number, key: string): void => {
      writer.write(message(name, chars), { key, written: () => written.push(name) })
    }
    write('a1', 1000, 'a')
    write('a2', 1000, 'a')
    write('a3', 1000, 'a')
    write('b1', 1000, 'b')
    write('ping', 10, 'b')
    assert.equal(writer.queued, 3, 'a1 is being written, the other large messages wait')
    await delay(200)
    // The ping never waited for a large message; b1 went before a2 although written after it.
    assert.deepEqual(log, ['large:a1', 'small:ping', 'large:b1', 'large:a2', 'large:a3'])
    assert.deepEqual(written.toSorted(), ['a1', 'a2', 'a3', 'b1', 'ping'])
  })

  it('makes a large message into JSON only when its turn comes', async () => {
    const log: string[] = []
    const writer = new LineWriter(
      { small: slowPipe(log, 'small'), large: slowPipe(log, 'large') },
      { smallLineChars: 100 },
    )
    const rendered: string[] = []
    for (const name of ['x1', 'x2', 'x3']) writer.write(message(name, 1000, rendered))
    assert.deepEqual(rendered, ['x1'], 'the first one only, as it is written')
    // A message that looks small but is large once made (escapes) still goes on the large lane.
    writer.write({ name: 'escaped', text: '\u0001'.repeat(20) })
    await delay(200)
    assert.deepEqual(rendered, ['x1', 'x2', 'x3'])
    assert.deepEqual(log, ['large:x1', 'large:x2', 'large:x3', 'large:escaped'])
  })

  it('gives back every waiting message when closed or when a lane goes', async () => {
    const log: string[] = []
    const writer = new LineWriter(
      { small: slowPipe(log, 'small'), large: slowPipe(log, 'large') },
      { smallLineChars: 100 },
    )
    const written: string[] = []
    for (const name of ['x1', 'x2', 'x3'])
      writer.write(message(name, 1000), { written: () => written.push(name) })
    writer.close()
    assert.deepEqual(written.toSorted(), ['x2', 'x3'], 'the waiting ones at once')
    await delay(50)
    assert.deepEqual(written.toSorted(), ['x1', 'x2', 'x3'])
    assert.equal(writer.write(message('late', 10), { written: () => written.push('late') }), false)
    assert.ok(written.includes('late'))
    const large = slowPipe(log, 'large')
    const other = new LineWriter({ small: slowPipe(log, 'small'), large }, { smallLineChars: 100 })
    large.destroy()
    assert.equal(other.write(message('y', 1000), { written: () => written.push('y') }), false)
    assert.ok(written.includes('y'))
  })
})
