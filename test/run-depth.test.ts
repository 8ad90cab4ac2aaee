/**
 * The configuration's bound on how deep Runs may hire Runs (`runs.maxDepth`), through a real
 * workshop (real git history, real SQLite store) and a model Run driven by the AI SDK's mock
 * model: the lead Run (depth 1) hires a child from js_eval's `agent` namespace, admitted under
 * the default bound (4) and refused, with nothing admitted, under a bound of 1.
 */
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { describe, it } from 'node:test'
import { MockLanguageModelV4 } from 'ai/test'
import type { Approver } from '../src/access/approval.ts'
import {
  answers,
  callsTool,
  fixedCatalog,
  recordingProgram,
  type ModelStep,
} from '../src/agent/llm/test-llm-fixture.ts'
import { llmProgramFactory } from '../src/agent/llm/llm-program.ts'
import { openStore } from '../src/store/open-store.ts'
import type { ToolResult } from '../src/tool/tool-result.ts'
import { openWorkshop } from '../src/workshop/workshop.ts'
import { makeScratch } from './helpers/scratch.ts'

const approveAll: Approver = async () => ({ type: 'approved', by: 'test' })

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
      await using scratch = await makeScratch()
      const runs = maxDepth === undefined ? {} : { runs: { maxDepth } }
      await fs.writeFile(scratch.configPath, JSON.stringify(runs))
      const steps: ModelStep[] = [
        () => callsTool([{ name: 'js_eval', input: { code: HIRE_CHILD } }]),
        () => answers('done'),
      ]
      let next = 0
      const model = new MockLanguageModelV4({
        provider: 'local',
        modelId: 'stub-1',
        doGenerate: async (options) =>
          (steps[Math.min(next++, steps.length - 1)] as ModelStep)(options),
      })
      await using store = await openStore(`sqlite:${path.join(scratch.root, 'store.sqlite')}`)
      const llm = llmProgramFactory({ catalog: fixedCatalog(model), store })
      const results: ToolResult[] = []
      const recording = recordingProgram(llm, (_runId, _call, result) => results.push(result))
      await using workshop = await openWorkshop({
        workspace: scratch.workspace,
        stateDir: scratch.stateDir,
        configPath: scratch.configPath,
        store,
        programs: { llm: recording },
      })
      await using session = await workshop.openSession({ approver: approveAll })
      const agents = session.context().agents
      assert.ok(agents !== undefined)
      const lead = {
        id: 'lead',
        modelPolicy: { provider: 'local', model: 'stub-1' },
        program: { kind: 'llm' },
        tools: ['js_eval'],
        access: 'workspace-write',
      }
      const id = await agents.hire({
        agent: 'lead',
        roster: { content: { agents: [lead] }, source: 'test' },
        task: 'go deep',
      })
      const outcome = await agents.result(id)
      assert.equal(outcome.status, 'completed', JSON.stringify(outcome))
      const [evaluated] = results
      assert.equal(evaluated?.type, 'success', evaluated?.content)
      const printed = JSON.parse(/\{"value".*\}/.exec(evaluated.content)?.[0] ?? '{}') as {
        value?: string
        refused?: string
      }
      if (maxDepth === undefined) {
        // Positive control: a child at depth 2 is well within the default bound.
        assert.deepEqual(printed, { value: 'deep', refused: '' }, evaluated.content)
        assert.equal((await store.listRuns()).length, 2)
      } else {
        assert.equal(printed.value, '', evaluated.content)
        assert.match(printed.refused ?? '', /depth 2, past the limit of 1 \(runs\.maxDepth/)
        assert.equal((await store.listRuns()).length, 1, 'the refused hire admitted no Run')
      }
    })
  }
})
