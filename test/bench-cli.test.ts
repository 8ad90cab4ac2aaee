/**
 * `eitri bench` through the real `eitri` process: join-v1 with its scripted model earns reward
 * 1 and exits 0; a real provider with no key is refused naming the variable to set; an unknown
 * environment is a usage error listing the environments.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { runEitri } from './helpers/eitri-process.ts'

describe('eitri bench', () => {
  it('runs join-v1 with its scripted model: reward 1, exit 0', async () => {
    const result = await runEitri(['bench', '--env', 'join-v1', '--model', 'scripted'])
    assert.equal(result.status, 0, result.stderr)
    assert.match(result.stdout, /^join-v1 on scripted:join-v1: reward 1$/m)
    assert.match(result.stdout, /ok {3}results observed/)
    assert.match(result.stdout, /steps 2, dollars 0\.\d+, time \d+ ms/)
  })

  it('refuses a real provider without its key, naming the variable', async () => {
    const env = { ...process.env }
    delete env['ANTHROPIC_API_KEY']
    const result = await runEitri(
      ['bench', '--env', 'join-v1', '--model', 'anthropic:claude-sonnet-4-20250514'],
      { env },
    )
    assert.equal(result.status, 1, result.stdout)
    assert.match(result.stderr, /ANTHROPIC_API_KEY/)
  })

  // nope-v1 is the control; the others are names every object inherits, not environments.
  for (const name of ['nope-v1', '__proto__', 'constructor', 'toString']) {
    it(`names the environments when --env is wrong (${name})`, async () => {
      const result = await runEitri(['bench', '--env', name, '--model', 'scripted'])
      assert.equal(result.status, 2, result.stderr)
      assert.match(result.stderr, /join-v1 \| race-v1 \| self-programming-v1 \| fix-test-v1/)
      assert.doesNotMatch(result.stderr, /unexpected failure/)
    })
  }
})
