/**
 * End to end: `eitri eval` and `eitri repl`, run as users run them.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { runEitri } from './helpers/eitri-process.ts'
import { makeScratch } from './helpers/scratch.ts'

describe('eitri eval', () => {
  it('prints the output and the value of one eval, reaching the workspace', async () => {
    await using scratch = await makeScratch({ 'a.txt': 'alpha\n' })
    const run = await runEitri([
      'eval',
      'console.log("reading"); (await fs.readFile("a.txt")).trim().toUpperCase()',
      ...scratch.flags,
    ])
    assert.equal(run.status, 0, run.stderr)
    assert.equal(run.stdout, 'reading\nALPHA\n')
  })

  it('exits 1 with the error on stderr when the code throws, and 2 without code', async () => {
    await using scratch = await makeScratch()
    const failed = await runEitri(['eval', 'throw new RangeError("no")', ...scratch.flags])
    assert.equal(failed.status, 1)
    assert.equal(failed.stderr, 'eval_error: RangeError: no\n    at <eval>:1:7\n')
    const usage = await runEitri(['eval', ...scratch.flags])
    assert.equal(usage.status, 2)
    assert.match(usage.stderr, /eval needs code/)
  })
})

describe('eitri repl', () => {
  it('evaluates each entry in one session, continuing unfinished entries on the next line', async () => {
    await using scratch = await makeScratch()
    const input = [
      'const base = 40',
      'function add(n) {',
      '  return base + n',
      '}',
      'add(2)',
      'missing',
      '.exit',
      'never',
    ].join('\n')
    const run = await runEitri(['repl', ...scratch.flags], { input: `${input}\n` })
    assert.equal(run.status, 0, run.stderr)
    assert.equal(run.stdout, 'undefined\nundefined\n42\n')
    assert.equal(
      run.stderr,
      'eval_error: ReferenceError: missing is not defined\n    at <eval>:1:1\n',
    )
  })
})
