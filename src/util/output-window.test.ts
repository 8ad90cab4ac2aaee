import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { OUTPUT_MARKER_ROOM, OutputWindow } from './output-window.mjs'

function windowOf(limit: number, ...chunks: string[]): OutputWindow {
  const window = new OutputWindow(limit)
  for (const chunk of chunks) window.push(chunk)
  return window
}

describe('OutputWindow', () => {
  it('keeps everything under its limit, as it came', () => {
    const window = windowOf(100, 'one\ntw', 'o\nthree')
    assert.equal(window.text(), 'one\ntwo\nthree')
    assert.equal(window.droppedChars, 0)
  })

  it('keeps the beginning and the end of a long stream and counts the middle', () => {
    const lines = Array.from({ length: 1000 }, (_, index) => `line ${index}\n`)
    const window = windowOf(200, ...lines)
    const text = window.text()
    assert.ok(text.startsWith('line 0\nline 1\n'), text)
    assert.ok(text.endsWith('line 998\nline 999\n'), text)
    assert.match(text, /\n\[\.\.\. \d+ characters dropped here: .*\]\nline \d+\n/)
    const all = lines.join('')
    const marker = /\[\.\.\. (\d+) characters dropped here[^\n]*\n/.exec(text)
    const tail = text.slice((marker?.index ?? 0) + (marker?.[0].length ?? 0))
    assert.ok(text.startsWith(all.slice(0, 100)))
    assert.ok(all.endsWith(tail))
    assert.equal(100 + Number(marker?.[1]) + tail.length, all.length)
    assert.ok(text.length <= 200 + OUTPUT_MARKER_ROOM)
  })

  it('collapses a run of identical lines into the line and a count', () => {
    const flood = 'Error: connection refused\n'.repeat(533)
    const text = windowOf(10_000, 'start\n', flood, 'Tests: 3 failed, 12 passed\n').text()
    assert.equal(
      text,
      'start\nError: connection refused\n[... the line above repeated 532 more times]\nTests: 3 failed, 12 passed\n',
    )
  })

  it('keeps the end of a failing run behind a flood far larger than the window', () => {
    const window = new OutputWindow(1000)
    window.push('running 15 tests\n')
    for (let index = 0; index < 100_000; index++) window.push('ECONNREFUSED 127.0.0.1:5432\n')
    window.push('FAILED: 3 of 15\n')
    const text = window.text()
    assert.equal(
      text,
      'running 15 tests\nECONNREFUSED 127.0.0.1:5432\n[... the line above repeated 99999 more times]\nFAILED: 3 of 15\n',
    )
    assert.equal(window.droppedChars, 0)
  })

  it('leaves two identical lines as they are, and counts a run still open at the end', () => {
    assert.equal(windowOf(1000, 'a\na\nb\n').text(), 'a\na\nb\n')
    assert.equal(
      windowOf(1000, 'x\n', 'x\nx\nx\n').text(),
      'x\n[... the line above repeated 3 more times]\n',
    )
  })

  it('writes the line again before its count when it was split between head and tail', () => {
    const window = new OutputWindow(200)
    window.push(`${'a'.repeat(98)}\n`)
    window.push('same\nsame\nsame\nsame\n')
    assert.equal(
      window.text(),
      `${'a'.repeat(98)}\nsame\nsame\n[... the line above repeated 2 more times]\n`,
    )
  })

  it('writes out a line that never ends instead of holding it', () => {
    const window = new OutputWindow(100)
    for (let index = 0; index < 1000; index++) window.push('#')
    const text = window.text()
    assert.ok(text.startsWith('#'.repeat(50)))
    assert.ok(text.endsWith('#'.repeat(50)))
    assert.equal(window.droppedChars, 900)
  })

  it('keeps a multi-byte character split across chunks whole', () => {
    const bytes = Buffer.from('grüße\n')
    const window = new OutputWindow(100)
    window.push(bytes.subarray(0, 3))
    window.push(bytes.subarray(3))
    assert.equal(window.text(), 'grüße\n')
  })
  it('copies its tail a bounded number of times however many lines pass through it', () => {
    // Cutting the tail back at every line copied the whole tail per line: 2 million lines of
    // `seq` held a shell answer for seconds. Count the cuts of a string longer than the tail.
    const window = new OutputWindow(30_000)
    const prototype = String.prototype
    const slice = Object.getOwnPropertyDescriptor(prototype, 'slice')
      ?.value as typeof prototype.slice
    let longCuts = 0
    prototype.slice = function (this: string, ...args: [number?, number?]) {
      if (this.length > 15_000) longCuts++
      return slice.apply(this, args)
    }
    try {
      for (let index = 0; index < 50_000; index++) window.push(`${index}\n`)
    } finally {
      prototype.slice = slice
    }
    assert.ok(longCuts < 100, `${longCuts} cuts of the tail for 50,000 lines`)
    const text = window.text()
    assert.ok(text.startsWith('0\n1\n2\n'))
    assert.ok(text.endsWith('49998\n49999\n'))
    const all = Array.from({ length: 50_000 }, (_, index) => `${index}\n`).join('')
    assert.equal(window.droppedChars + 30_000, all.length)
  })
})
