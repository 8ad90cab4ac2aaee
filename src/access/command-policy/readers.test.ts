import assert from 'node:assert/strict'
import { it } from 'node:test'
import { READERS } from './readers.ts'
import { GIT_READERS } from './rules/git-read-only.ts'
import type { OptionDefinition } from './scan-options.ts'

/**
 * A letter or name listed twice would be read with the arity of the first entry; if that is
 * the wrong one, the words after it are misread (`-n` taking a value hides `--output=f`).
 */
it('lists every option of a program once', () => {
  const tables: [string, readonly OptionDefinition[]][] = [
    ...Object.entries(READERS).map(([name, reader]): [string, readonly OptionDefinition[]] => [
      name,
      [...reader.reads, ...(reader.writes ?? [])],
    ]),
    ...Object.entries(GIT_READERS).map(([name, reader]): [string, readonly OptionDefinition[]] => [
      `git ${name}`,
      [...reader.reads, ...reader.writes],
    ]),
  ]
  for (const [program, options] of tables) {
    const spellings = options.flatMap((option) => [
      ...(option.short === undefined ? [] : [`-${option.short}`]),
      ...(option.long === undefined ? [] : [`--${option.long}`]),
    ])
    const twice = spellings.filter((spelling, index) => spellings.indexOf(spelling) !== index)
    assert.deepEqual(twice, [], program)
  }
})
