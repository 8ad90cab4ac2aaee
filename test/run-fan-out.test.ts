/**
 * The session's limit on Runs at once (`runs.maxActive`) holds for the Runs a Run hires, through
 * a real workshop (real git history, real SQLite store) and a model Run driven by the AI SDK's
 * mock model: hires from js_eval's `agent` namespace inside a Run count against the same limit
 * as the session's own, so a program cannot fan out into unbounded Runs and worlds.
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
      await using scratch = await makeScratch()
      await fs.writeFile(scratch.configPath, JSON.stringify({ runs: { maxActive: limit } }))
      const steps: ModelStep[] = [
        () => callsTool([{ name: 'js_eval', input: { code: FAN_OUT(count) } }]),
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
        task: 'fan out',
      })
      const outcome = await agents.result(id)
      assert.equal(outcome.status, 'completed', JSON.stringify(outcome))
      const [evaluated] = results
      assert.equal(evaluated?.type, 'success', evaluated?.content)
      const printed = JSON.parse(/\{"hired".*\}/.exec(evaluated.content)?.[0] ?? '{}') as {
        hired?: number
        refused?: string
      }
      assert.equal(printed.hired, hired, evaluated.content)
      if (hired < count) {
        assert.match(printed.refused ?? '', /Hire refused, nothing was admitted: 3 Runs/)
        assert.match(printed.refused ?? '', /runs\.maxActive/)
      } else {
        assert.equal(printed.refused, '')
      }
      // Only the Runs admitted have rows: the lead and its children, no more.
      assert.equal((await store.listRuns()).length, 1 + hired)
    })
  }
})
