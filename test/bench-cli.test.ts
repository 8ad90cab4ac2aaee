/**
 * `eitri bench` through the real `eitri` process: join-v1 with its scripted model earns reward
 * 1 and exits 0; a provider defined only in the configuration (a fake model API on loopback,
 * priced there) plays the same moves over the wire and earns reward 1, charged at the
 * configured price; a real provider with no key is refused naming the variable to set; an
 * unknown environment is a usage error listing the environments.
 */
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import { describe, it } from 'node:test'
import { JOIN_V1 } from '../src/bench/environments.ts'
import { runEitri } from './helpers/eitri-process.ts'
import { startModelWireServer } from './helpers/model-wire-server.ts'
import { makeScratch } from './helpers/scratch.ts'

describe('eitri bench', () => {
  it('runs join-v1 with its scripted model: reward 1, exit 0', async () => {
    const result = await runEitri(['bench', '--env', 'join-v1', '--model', 'scripted'])
    assert.equal(result.status, 0, result.stderr)
    assert.match(result.stdout, /^join-v1 on scripted:join-v1: reward 1$/m)
    assert.match(result.stdout, /ok {3}results observed/)
    assert.match(result.stdout, /steps 2, dollars 0\.\d+, time \d+ ms/)
  })

  it('resolves a provider from the configuration: its providers and prices', async () => {
    await using server = await startModelWireServer([
      {
        kind: 'tool-call',
        name: 'js_eval',
        input: { code: JOIN_V1 },
        usage: { input: 1_000, output: 100 },
      },
      { kind: 'text', text: '["left","right"]', usage: { input: 2_000, output: 10 } },
    ])
    await using scratch = await makeScratch()
    await fs.writeFile(
      scratch.configPath,
      JSON.stringify({
        providers: { wire: { type: 'openai-compatible', baseURL: server.openaiURL } },
        prices: { 'wire:stub-1': { input: 1, output: 2 } },
        contextWindows: { 'wire:stub-1': 65_536 },
      }),
    )
    const args = ['bench', '--env', 'join-v1', '--model', 'wire:stub-1', '--json']
    const result = await runEitri([...args, '--config', scratch.configPath])
    assert.equal(result.status, 0, result.stderr + result.stdout)
    const report = JSON.parse(result.stdout) as { reward: number; steps: number; dollars: number }
    // 3,000 input tokens at $1 and 110 output tokens at $2 a million: the configured price.
    assert.deepEqual([report.reward, report.steps, report.dollars.toFixed(6)], [1, 2, '0.003220'])
    assert.equal(server.requests.length, 2)
    assert.equal(server.requests[0]?.body['model'], 'stub-1')

    // Control: without the configuration the provider is unknown, and nothing is called.
    const unknown = await runEitri([...args, '--config', `${scratch.configPath}.missing`])
    assert.equal(unknown.status, 1)
    assert.match(unknown.stderr, /wire/)
    assert.equal(server.requests.length, 2)
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
