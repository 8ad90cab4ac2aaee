import assert from 'node:assert/strict'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { afterEach, beforeEach, describe, it } from 'node:test'
import { z } from 'zod'
import { EitriError } from '../errors/eitri-error.ts'
import { LineSplitter } from '../util/line-splitter.ts'
import { appendStateLine, readStateJson, readStateLines, TORN_LINE_SEAL } from './state-file.ts'

const record = z.strictObject({ n: z.number().int() })
const log = { what: 'the test log', fix: 'Remove it.', maxLineBytes: 100 }

function corruptMessage(run: () => unknown): string {
  try {
    run()
  } catch (error) {
    assert.ok(EitriError.isInstance(error), String(error))
    assert.equal(error.code, 'state_corrupt')
    return error.message
  }
  assert.fail('expected state_corrupt')
}

describe('state files', () => {
  let folder: string
  let file: string
  beforeEach(() => {
    folder = fs.mkdtempSync(path.join(os.tmpdir(), 'eitri-state-file-'))
    file = path.join(folder, 'log.jsonl')
  })
  afterEach(() => fs.rmSync(folder, { recursive: true, force: true }))

  it('reads back what was appended; a missing file has no records', () => {
    assert.deepEqual(readStateLines(file, record, log), [])
    appendStateLine(file, { n: 1 })
    appendStateLine(file, { n: 2 })
    assert.deepEqual(readStateLines(file, record, log), [{ n: 1 }, { n: 2 }])
  })

  it('drops a last line a crash cut short, and keeps excusing it once more lines follow', () => {
    fs.writeFileSync(file, '{"n":1}\n{"n":')
    assert.deepEqual(readStateLines(file, record, log), [{ n: 1 }])
    appendStateLine(file, { n: 3 })
    assert.equal(fs.readFileSync(file, 'utf8'), `{"n":1}\n{"n":\n${TORN_LINE_SEAL}\n{"n":3}\n`)
    assert.deepEqual(readStateLines(file, record, log), [{ n: 1 }, { n: 3 }])
  })

  it('names the file and the line of a bad record in the middle, or a bad whole last line', () => {
    // The control: the same torn bytes without a seal after them, in the middle, are refused.
    fs.writeFileSync(file, '{"n":1}\n{"n":\n{"n":3}\n')
    assert.equal(
      corruptMessage(() => readStateLines(file, record, log)),
      `The test log ${file} line 2 is not a valid record (not JSON). Remove it.`,
    )
    // A whole line that is bad is not a torn append, even when it is the last.
    fs.writeFileSync(file, '{"n":1}\n{"n":\n')
    assert.match(
      corruptMessage(() => readStateLines(file, record, log)),
      /line 2 .*not JSON/,
    )
    fs.writeFileSync(file, '{"n":1}\n{"n":"two"}\n')
    assert.match(
      corruptMessage(() => readStateLines(file, record, log)),
      /line 2 is not a valid record \(n: .*number/,
    )
    fs.writeFileSync(file, `{"n":1}\n{"n":${'1'.repeat(200)}}\n`)
    assert.match(
      corruptMessage(() => readStateLines(file, record, log)),
      /line 2 is not a valid record \(longer than 100 bytes/,
    )
  })

  it('reads one JSON file within its size cap, and names it when it is bad', () => {
    const options = { what: 'the journal', fix: 'Move it aside.', maxBytes: 50 }
    assert.equal(readStateJson(file, record, options), undefined)
    fs.writeFileSync(file, '{"n":7}')
    assert.deepEqual(readStateJson(file, record, options), { n: 7 })
    fs.writeFileSync(file, '{"n":7')
    assert.equal(
      corruptMessage(() => readStateJson(file, record, options)),
      `The journal ${file} is not valid (not JSON). Move it aside.`,
    )
    fs.writeFileSync(file, JSON.stringify({ n: 1, pad: 'x'.repeat(100) }))
    assert.match(
      corruptMessage(() => readStateJson(file, record, options)),
      /over the 50-byte/,
    )
  })
})

describe('LineSplitter', () => {
  it('joins lines split across chunks and stops at the first line over its limit', () => {
    const lines: string[] = []
    let overflow: number | undefined
    const splitter = new LineSplitter(8, {
      line: (line) => lines.push(line),
      overflow: (bytes) => (overflow = bytes),
    })
    splitter.push(Buffer.from('ab'))
    splitter.push(Buffer.from('c\nde\n12345'))
    splitter.push(Buffer.from('678\nafter\n'))
    assert.deepEqual(lines, ['abc', 'de', '12345678', 'after'])
    splitter.push(Buffer.from('123456789'))
    assert.equal(overflow, 9)
    splitter.push(Buffer.from('\nmore\n'))
    assert.deepEqual(lines, ['abc', 'de', '12345678', 'after'], 'nothing after an overflow')
  })
})
