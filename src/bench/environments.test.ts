/**
 * program-bench with a model at the root: every environment earns reward 1 with its scripted
 * model, and each verifier gives 0 to a script that answers wrong or leaves work undone,
 * naming the check that failed.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { runEnvironment, type BenchReport } from './bench-environment.ts'
import { ENVIRONMENTS } from './environments.ts'
import { scriptedCatalog } from './scripted-catalog.ts'
import { answer, callTool, lastToolResult } from './scripted-model.ts'

function failed(report: BenchReport): string[] {
  return report.checks.filter((entry) => !entry.ok).map((entry) => entry.name)
}

function env(name: string) {
  const found = ENVIRONMENTS[name]
  assert.ok(found !== undefined, name)
  return found
}

describe('program-bench with a scripted model', () => {
  for (const name of Object.keys(ENVIRONMENTS)) {
    it(`gives ${name} reward 1`, async () => {
      const environment = env(name)
      const report = await runEnvironment(environment, {
        catalog: scriptedCatalog(environment),
        model: 'scripted:scripted',
      })
      assert.equal(report.reward, 1, JSON.stringify(report, null, 1))
      assert.ok(report.steps >= 2 && report.dollars > 0 && report.inputsId !== undefined)
    })
  }
})

describe('program-bench verifiers', () => {
  const run = (name: string, script: Parameters<typeof scriptedCatalog>[1]) =>
    runEnvironment(env(name), { catalog: scriptedCatalog(env(name), script), model: 'scripted:x' })

  it('give 0 to a wrong result and to trailing text after the JSON value', async () => {
    const wrong = await run('join-v1', [env('join-v1').script[0]!, answer('["right","left"]')])
    assert.equal(wrong.reward, 0)
    assert.deepEqual(failed(wrong), ['exact result'])
    const trailing = await run('self-programming-v1', [
      env('self-programming-v1').script[0]!,
      answer((prompt) => `${lastToolResult(prompt)} done`),
    ])
    assert.equal(trailing.reward, 0)
    assert.deepEqual(failed(trailing), ['exact result'])
  })

  it('gives 0 to a race that leaves its loser running to its end', async () => {
    const code = (env('race-v1').script[0]!([]).content[0] as { input: string }).input
    const lazy = (JSON.parse(code) as { code: string }).code.replace(
      'await agent.race([slow, fast])',
      'await Promise.race([slow.result(), fast.result()])',
    )
    const report = await run('race-v1', [
      callTool('js_eval', { code: lazy }),
      answer(lastToolResult),
    ])
    assert.equal(report.reward, 0)
    assert.ok(failed(report).includes('children ended as expected'), failed(report).join())
  })

  it('gives 0 to a team missing a specialist', async () => {
    const code = (env('self-programming-v1').script[0]!([]).content[0] as { input: string }).input
    const two = (JSON.parse(code) as { code: string }).code.replace(
      "await agent.hire(team, 'checker', { task: 'verify the count' }),",
      '{ value: true, result: async () => ({ value: true }) },',
    )
    const report = await run('self-programming-v1', [
      callTool('js_eval', { code: two }),
      answer(lastToolResult),
    ])
    assert.equal(report.reward, 0)
    assert.ok(failed(report).includes('3 children with the expected ids'), failed(report).join())
  })

  it('gives 0 to a "fix" that edits the test instead of the code, or makes no fix', async () => {
    const report = await run('fix-test-v1', [
      callTool('edit_file', { path: 'sum.test.js', old_string: '5)', new_string: '-1)' }),
      answer('"fixed"'),
    ])
    assert.equal(report.reward, 0)
    assert.deepEqual(failed(report), ['nothing else changed'])
    // Claiming the fix without making it: the test still fails in the jail.
    const claimed = await run('fix-test-v1', [answer('"fixed"')])
    assert.equal(claimed.reward, 0)
    assert.deepEqual(failed(claimed), ['test passes', 'nothing else changed'])
  })
})
