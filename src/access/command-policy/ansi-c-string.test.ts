import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { decodeAnsiCString } from './ansi-c-string.ts'

describe('decodeAnsiCString', () => {
  it("decodes what bash decodes inside $'…'", () => {
    const cases: [string, string | undefined][] = [
      ['sudo', 'sudo'],
      ['\\x73udo', 'sudo'],
      ['\\163udo', 'sudo'],
      ['\\u0073udo', 'sudo'],
      ['\\U00000073udo', 'sudo'],
      ["it\\'s", "it's"],
      ['a\\tb\\n', 'a\tb\n'],
      ['\\cA', '\x01'],
      ['\\q', '\\q'],
      ['\\x', '\\x'],
      ['a\\x00b', undefined],
      ['\\U00110000', undefined],
      // bash keeps one byte of an octal escape, ends the word at a NUL however made, and
      // reads `\c` as its TOCTRL does.
      ['\\455\\455output', '--output'],
      ['\\543at', 'cat'],
      ['\\400', undefined],
      ['clean\\c@', undefined],
      ['\\c ', undefined],
      ['a\\c?b', 'a\x7fb'],
      ['a\\c\\\\b', 'a\x1cb'],
    ]
    for (const [inside, decoded] of cases) assert.equal(decodeAnsiCString(inside), decoded, inside)
  })
})
