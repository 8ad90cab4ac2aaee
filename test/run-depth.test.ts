/**
 * The configuration's bound on how deep Runs may hire Runs (`runs.maxDepth`), through a real
 * workshop (real git history, real SQLite store) and a model Run driven by the AI SDK's mock
 * model: the lead Run (depth 1) hires a child from js_eval's `agent` namespace, admitted under
 * the default bound (4) and refused, with nothing admitted, under a bound of 1.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { runLeadEval } from './helpers/lead-eval-run.ts'

/** Hires one echo child from inside the Run and prints what came of it. */
const HIRE_CHILD = `
const team = { agents: [{ id: 'child', program: { kind: 'echo' }, tools: [] }] }
let value = ''
let refused = ''
try { value = (await (await agent.hire(team, 'child', { task: 'deep' })).result()).value }
catch (error) { refused = error.message }
console.log(JSON.stringify({ value, refused }))
`

describe('runs.maxDepth', () => {
  for (const maxDepth of [undefined, 1]) {
    it(`a Run hiring a child under ${maxDepth === undefined ? 'the default bound' : `a bound of ${maxDepth}`}`, async () => {
      const { evaluated, runRows } = await runLeadEval(
        maxDepth === undefined ? {} : { runs: { maxDepth } },
        HIRE_CHILD,
      )
      const printed = JSON.parse(/\{"value".*\}/.exec(evaluated)?.[0] ?? '{}') as {
        value?: string
        refused?: string
      }
      if (maxDepth === undefined) {
        // Positive control: a child at depth 2 is well within the default bound.
        assert.deepEqual(printed, { value: 'deep', refused: '' }, evaluated)
        assert.equal(runRows, 2)
      } else {
        assert.equal(printed.value, '', evaluated)
        assert.match(printed.refused ?? '', /depth 2, past the limit of 1 \(runs\.maxDepth/)
        assert.equal(runRows, 1, 'the refused hire admitted no Run')
      }
    })
  }
})
