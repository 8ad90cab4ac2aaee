/**
 * The session's limit on Runs at once (`runs.maxActive`) holds for the Runs a Run hires, through
 * a real workshop (real git history, real SQLite store) and a model Run driven by the AI SDK's
 * mock model: hires from js_eval's `agent` namespace inside a Run count against the same limit
 * as the session's own, so a program cannot fan out into unbounded Runs and worlds.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { runLeadEval } from './helpers/lead-eval-run.ts'

/** Hires `count` slow echo children from inside the Run, one by one, and prints what came of it. */
const FAN_OUT = (count: number) => `
const team = { agents: [{ id: 'slow', program: { kind: 'echo', delayMs: 30000 }, tools: [] }] }
const handles = []
let refused = ''
for (let i = 0; i < ${count}; i++) {
  try { handles.push(await agent.hire(team, 'slow', { task: 'n' + i })) }
  catch (error) { refused = error.message; break }
}
for (const handle of handles) await handle.cancel()
console.log(JSON.stringify({ hired: handles.length, refused }))
`

describe('runs.maxActive inside a Run', () => {
  for (const [limit, count, hired] of [
    // Positive control: under the limit every hire is admitted.
    [8, 3, 3],
    // The lead is one of the three: two children, then a refusal.
    [3, 12, 2],
  ] as const) {
    it(`a Run hiring ${count} children under a limit of ${limit} gets ${hired}`, async () => {
      const { evaluated, runRows } = await runLeadEval(
        { runs: { maxActive: limit } },
        FAN_OUT(count),
      )
      const printed = JSON.parse(/\{"hired".*\}/.exec(evaluated)?.[0] ?? '{}') as {
        hired?: number
        refused?: string
      }
      assert.equal(printed.hired, hired, evaluated)
      if (hired < count) {
        assert.match(printed.refused ?? '', /Hire refused, nothing was admitted: 3 Runs/)
        assert.match(printed.refused ?? '', /runs\.maxActive/)
      } else {
        assert.equal(printed.refused, '')
      }
      // Only the Runs admitted have rows: the lead and its children, no more.
      assert.equal(runRows, 1 + hired)
    })
  }
})
