import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { Writable } from 'node:stream'
import { LineWriter } from './line-writer.ts'

/** A slow pipe: each write takes a few milliseconds, and the lines are kept in arrival order. */
function slowStream(): { stream: Writable; lines: string[] } {
  const lines: string[] = []
  const stream = new Writable({
    highWaterMark: 16,
    write(chunk: Buffer, _encoding, callback) {
      for (const line of chunk.toString('utf8').split('\n')) if (line !== '') lines.push(line)
      setTimeout(callback, 5)
    },
  })
  return { stream, lines }
}

/** A line of `chars` characters named `name`. */
const line = (name: string, chars: number): string => name + '.'.repeat(chars - name.length)
const names = (lines: string[]): string[] => lines.map((text) => text.replace(/\.+$/, ''))

describe('LineWriter', () => {
  it('lets small lines pass the large ones waiting, and large ones take turns between keys', async () => {
    const { stream, lines } = slowStream()
    const writer = new LineWriter(stream, { smallLineChars: 100 })
    const written: string[] = []
    const write = (name: string, chars: number, key: string): void => {
      writer.write(line(name, chars), { key, written: () => written.push(name) })
    }
    write('a1', 1000, 'a')
    write('a2', 1000, 'a')
    write('a3', 1000, 'a')
    write('b1', 1000, 'b')
    write('ping', 10, 'b')
    assert.equal(writer.queued, 3, 'a1 is being written, the other large lines wait')
    await new Promise((resolve) => setTimeout(resolve, 200))
    // The ping waited behind a1 only; b1 went before a2 although it was written after it.
    assert.deepEqual(names(lines), ['a1', 'ping', 'b1', 'a2', 'a3'])
    assert.deepEqual(written.toSorted(), ['a1', 'a2', 'a3', 'b1', 'ping'])
  })

  it('the control: lines of one size class keep their order', async () => {
    const { stream, lines } = slowStream()
    const writer = new LineWriter(stream, { smallLineChars: 100 })
    for (const name of ['x1', 'x2', 'x3']) writer.write(line(name, 1000), { key: 'x' })
    for (const name of ['s1', 's2']) writer.write(line(name, 10))
    await new Promise((resolve) => setTimeout(resolve, 200))
    assert.deepEqual(names(lines), ['x1', 's1', 's2', 'x2', 'x3'])
  })

  it('gives back every waiting line when closed or when the stream goes', async () => {
    const { stream } = slowStream()
    const writer = new LineWriter(stream, { smallLineChars: 100 })
    const written: string[] = []
    for (const name of ['x1', 'x2', 'x3'])
      writer.write(line(name, 1000), { key: 'x', written: () => written.push(name) })
    writer.close()
    assert.deepEqual(written.toSorted(), ['x2', 'x3'], 'the queued ones at once')
    await new Promise((resolve) => setTimeout(resolve, 50))
    assert.deepEqual(written.toSorted(), ['x1', 'x2', 'x3'])
    assert.equal(writer.write('late', { written: () => written.push('late') }), false)
    assert.ok(written.includes('late'))
    const second = slowStream()
    const other = new LineWriter(second.stream, { smallLineChars: 100 })
    second.stream.destroy()
    assert.equal(other.write(line('y', 1000), { written: () => written.push('y') }), false)
    assert.ok(written.includes('y'))
  })
})
