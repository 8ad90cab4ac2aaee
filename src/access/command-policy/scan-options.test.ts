import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { couldBecomeOption, hasOption, scanOptions, type OptionDefinition } from './scan-options.ts'
import { dynamicWord, literalWord, type ShellWord } from './shell-syntax.ts'

const RM: readonly OptionDefinition[] = [
  { name: 'recursive', short: 'r', long: 'recursive' },
  { name: 'recursive', short: 'R' },
  { name: 'force', short: 'f', long: 'force' },
  { name: 'no-preserve-root', long: 'no-preserve-root' },
  { name: 'preserve-root', long: 'preserve-root' },
]
const TIMEOUT: readonly OptionDefinition[] = [
  { name: 'signal', short: 's', long: 'signal', value: 'required' },
  { name: 'verbose', short: 'v', long: 'verbose' },
]

function words(...values: string[]): ShellWord[] {
  return values.map((value) => literalWord(value))
}

function summary(scan: ReturnType<typeof scanOptions>) {
  return {
    options: scan.options.map((option) => [option.name, option.value?.value]),
    operands: scan.operands.map((word) => word.value ?? word.text),
    unknown: scan.unknown,
  }
}

describe('scanOptions', () => {
  it('reads every spelling of the same options alike', () => {
    const spellings = [
      ['-rf', '/'],
      ['-fr', '/'],
      ['-r', '-f', '/'],
      ['--recursive', '--force', '/'],
      ['--rec', '--fo', '/'],
      ['/', '-R', '-f'],
      ['-rf', '--', '/'],
    ]
    for (const spelling of spellings) {
      const scan = scanOptions(words(...spelling), RM)
      assert.ok(hasOption(scan, 'recursive') && hasOption(scan, 'force'), spelling.join(' '))
      assert.deepEqual(summary(scan).operands, ['/'], spelling.join(' '))
    }
  })

  it('reads everything after `--` as operands, and an ambiguous prefix as unknown', () => {
    const scan = scanOptions(words('--', '-rf', '/'), RM)
    assert.deepEqual(summary(scan), { options: [], operands: ['-rf', '/'], unknown: [] })
    const versions: OptionDefinition[] = [
      { name: 'verbose', long: 'verbose' },
      { name: 'version', long: 'version' },
    ]
    assert.deepEqual(summary(scanOptions(words('--ver', 'x'), versions)).unknown, ['--ver'])
    assert.deepEqual(summary(scanOptions(words('--verb', 'x'), versions)).options, [
      ['verbose', undefined],
    ])
    assert.deepEqual(summary(scanOptions(words('-rz', 'x'), RM)).unknown, ['-z'])
  })

  it('takes values attached, after `=`, or from the next word', () => {
    for (const spelling of [['-sKILL'], ['-s', 'KILL'], ['--signal=KILL'], ['--sig', 'KILL']]) {
      const scan = scanOptions(words(...spelling, '5', 'ls'), TIMEOUT, { stopAtOperand: true })
      assert.deepEqual(summary(scan).options, [['signal', 'KILL']], spelling.join(' '))
      assert.equal(scan.end, spelling.length)
    }
  })

  it('stops at the first operand, or at a word only known at run time, when asked to', () => {
    const scan = scanOptions(words('-v', 'sudo', '-v'), TIMEOUT, { stopAtOperand: true })
    assert.equal(scan.end, 1)
    const dynamic = scanOptions([literalWord('-v'), dynamicWord('$X')], TIMEOUT, {
      stopAtOperand: true,
    })
    assert.equal(dynamic.end, 1)
    assert.deepEqual(
      dynamic.dynamic.map((word) => word.text),
      ['$X'],
    )
    assert.equal(
      scanOptions(words('-5', 'make'), [], { stopAtOperand: true, numericOptions: true }).end,
      1,
    )
  })

  it('knows long options only by their full name when told to', () => {
    const exact = scanOptions(words('--rec', '--force', '/'), RM, { exactLong: true })
    assert.deepEqual(summary(exact), {
      options: [['force', undefined]],
      operands: ['/'],
      unknown: ['--rec'],
    })
  })

  it('counts globs and expansions that could become options, and no others', () => {
    const glob = (text: string, pattern = text): ShellWord => ({
      ...literalWord(text),
      glob: true,
      pattern,
    })
    const substitution: ShellWord = { ...dynamicWord('<(sort a)'), operandOnly: true }
    const expanding = [glob('*'), glob('{--pre=x,a}'), glob('?x'), dynamicWord('"$f"')]
    const fixed = [glob('./*'), glob('src/*.ts'), glob('\\*', '\\*'), substitution]
    for (const word of expanding) assert.equal(couldBecomeOption(word), true, word.text)
    for (const word of fixed) assert.equal(couldBecomeOption(word), false, word.text)
    const scan = scanOptions([...expanding, ...fixed], RM, { globsMayBeOptions: true })
    assert.deepEqual(
      scan.dynamic.map((word) => word.text),
      expanding.map((word) => word.text),
    )
    assert.deepEqual(scanOptions([glob('*')], RM).dynamic, [])
  })
})
