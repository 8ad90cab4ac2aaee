/**
 * A model Run that runs one js_eval program, through a real workshop (real git history, real
 * SQLite store) with the AI SDK's mock model: the lead agent calls js_eval with `code`, then
 * answers. For tests of what a Run may do from js_eval's `agent` namespace under the
 * configuration's bounds.
 */
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { MockLanguageModelV4 } from 'ai/test'
import type { Approver } from '../../src/access/approval.ts'
import {
  answers,
  callsTool,
  fixedCatalog,
  recordingProgram,
  type ModelStep,
} from '../../src/agent/llm/test-llm-fixture.ts'
import { llmProgramFactory } from '../../src/agent/llm/llm-program.ts'
import { openStore } from '../../src/store/open-store.ts'
import type { ToolResult } from '../../src/tool/tool-result.ts'
import { openWorkshop } from '../../src/workshop/workshop.ts'
import { makeScratch } from './scratch.ts'

const approveAll: Approver = async () => ({ type: 'approved', by: 'test' })

/** What came of the lead Run: the js_eval result's text and how many Runs have rows. */
export interface LeadEvalOutcome {
  readonly evaluated: string
  readonly runRows: number
}

/**
 * Runs `code` in js_eval from a lead Run under `config` (written as the configuration file);
 * asserts the lead completed and js_eval succeeded.
 */
export async function runLeadEval(config: object, code: string): Promise<LeadEvalOutcome> {
  await using scratch = await makeScratch()
  await fs.writeFile(scratch.configPath, JSON.stringify(config))
  const steps: ModelStep[] = [
    () => callsTool([{ name: 'js_eval', input: { code } }]),
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
    task: 'run the program',
  })
  const outcome = await agents.result(id)
  assert.equal(outcome.status, 'completed', JSON.stringify(outcome))
  const [evaluated] = results
  assert.equal(evaluated?.type, 'success', evaluated?.content)
  return { evaluated: evaluated.content, runRows: (await store.listRuns()).length }
}
