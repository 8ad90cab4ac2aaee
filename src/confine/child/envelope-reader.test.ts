import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { envelopeLine, newMarker } from './confined-protocol.ts'
import { EnvelopeReader } from './envelope-reader.ts'

const limits = { maxOutputBytes: 1000, maxEnvelopeBytes: 1000 }

describe('EnvelopeReader', () => {
  it('finds the envelope split across chunks at every position', () => {
    const marker = newMarker()
    const stream = `printed ü\n${envelopeLine(marker, { result: { ok: 'ü' } })}`
    const bytes = Buffer.from(stream)
    for (let cut = 0; cut <= bytes.length; cut++) {
      const reader = new EnvelopeReader(marker, limits)
      reader.push(bytes.subarray(0, cut))
      reader.push(bytes.subarray(cut))
      assert.deepEqual(reader.finish(), {
        stdout: 'printed ü\n',
        envelope: { result: { ok: 'ü' } },
        envelopeTooLarge: false,
      })
    }
  })

  it('takes no envelope from a line without the call’s own marker, or an unfinished one', () => {
    const reader = new EnvelopeReader(newMarker(), limits)
    const forged = envelopeLine(newMarker(), { result: 'forged' })
    reader.push(forged)
    assert.deepEqual(reader.finish(), {
      stdout: forged,
      envelope: undefined,
      envelopeTooLarge: false,
    })
    const marker = newMarker()
    const cut = new EnvelopeReader(marker, limits)
    cut.push(envelopeLine(marker, { result: 'x'.repeat(50) }).slice(0, -10))
    assert.equal(cut.finish().envelope, undefined)
  })

  it('ignores what is printed after the envelope line', () => {
    const marker = newMarker()
    const reader = new EnvelopeReader(marker, limits)
    reader.push(`${envelopeLine(marker, { error: 'boom' })}late output\n`)
    assert.deepEqual(reader.finish().envelope, { error: 'boom' })
  })

  it('takes no envelope of the wrong shape: an error that is no text, or anything besides', () => {
    for (const envelope of [{ error: { message: 'x' } }, { result: 1, extra: 2 }, [1], 'text']) {
      const marker = newMarker()
      const reader = new EnvelopeReader(marker, limits)
      reader.push(`\n${marker}${JSON.stringify(envelope)}\n`)
      assert.equal(reader.finish().envelope, undefined, JSON.stringify(envelope))
    }
    // The control: the same line with a string error is an envelope.
    const marker = newMarker()
    const reader = new EnvelopeReader(marker, limits)
    reader.push(`\n${marker}${JSON.stringify({ error: 'x' })}\n`)
    assert.deepEqual(reader.finish().envelope, { error: 'x' })
  })

  it('refuses an envelope over its limit', () => {
    const marker = newMarker()
    const reader = new EnvelopeReader(marker, { maxOutputBytes: 10, maxEnvelopeBytes: 20 })
    reader.push(envelopeLine(marker, { result: 'x'.repeat(100) }))
    assert.equal(reader.envelopeTooLarge, true)
    assert.equal(reader.finish().envelope, undefined)
  })
})
