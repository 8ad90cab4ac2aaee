/**
 * program-bench level 1: `join-v1` and `race-v1`, replayed as js_eval programs of a root Run in
 * a real workshop, earn reward 1 from the trusted verifier; negative controls (a race that
 * never cancels its loser, a join that answers the wrong result) earn 0, each failing the
 * check that names its fault.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { levelOneTasks, runTask, type BenchVerdict } from '../bench/programs/program-bench.ts'

function failed(verdict: BenchVerdict): string[] {
  return verdict.checks.filter((check) => !check.ok).map((check) => check.name)
}

describe('program-bench level 1', () => {
  it('gives join-v1 and race-v1 reward 1', async () => {
    for (const task of await levelOneTasks()) {
      const verdict = await runTask(task)
      assert.equal(verdict.reward, 1, `${task.name}: ${JSON.stringify(verdict.checks, null, 1)}`)
    }
  })

  it('gives 0 to a race that does not cancel its loser, and to a wrong result', async () => {
    const [join, race] = await levelOneTasks()
    assert.ok(join !== undefined && race !== undefined)
    // The loser is only stopped being waited for: it runs to its end.
    const lazy = await runTask({
      ...race,
      code: race.code.replace(
        'await agent.race([slow, fast])',
        'await Promise.race([slow.result(), fast.result()])',
      ),
    })
    assert.equal(lazy.reward, 0)
    assert.deepEqual(failed(lazy), ['children ended as expected (the loser cancelled)'])
    const wrong = await runTask({
      ...join,
      code: join.code.replace('results.map(', 'results.reverse().map('),
    })
    assert.equal(wrong.reward, 0)
    assert.deepEqual(failed(wrong), ['exact result'])
  })
})
