/**
 * A session's dollar ceiling (`runs.sessionBudgetDollars`), through a real workshop session
 * (real SQLite store, real workspace lines) with the AI SDK's mock model: each Run the session
 * hires takes its budget out of what the session has left, so a model hiring Run after Run
 * cannot spend past the ceiling, and a hire asking more than is left is refused with the fix.
 */
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { describe, it } from 'node:test'
import {
  answers,
  fixedCatalog,
  scriptedModel,
  STUB_POLICY,
  usage,
} from '../src/agent/llm/test-llm-fixture.ts'
import { llmProgramFactory } from '../src/agent/llm/llm-program.ts'
import { EitriError } from '../src/errors/eitri-error.ts'
import { openStore } from '../src/store/open-store.ts'
import { openWorkshop } from '../src/workshop/workshop.ts'
import { makeScratch, type Scratch } from './helpers/scratch.ts'

const AGENT = { id: 'answerer', modelPolicy: STUB_POLICY, program: { kind: 'llm' } }

/** A workshop whose llm Runs answer at once, each call reporting 5,000 input tokens ($0.005). */
async function open(scratch: Scratch, config: Record<string, unknown>) {
  await fs.writeFile(scratch.configPath, JSON.stringify(config))
  const store = await openStore(`sqlite:${path.join(scratch.root, 'store.sqlite')}`)
  const model = scriptedModel([() => answers('done', usage(5000, 10))])
  const workshop = await openWorkshop({
    workspace: scratch.workspace,
    stateDir: scratch.stateDir,
    configPath: scratch.configPath,
    store,
    programs: { llm: llmProgramFactory({ catalog: fixedCatalog(model), store }) },
  })
  const session = await workshop.openSession()
  const agents = session.context().agents
  assert.ok(agents !== undefined)
  const hire = (limits?: Record<string, unknown>) =>
    agents.hire({
      agent: AGENT.id,
      roster: { content: { agents: [AGENT] }, source: 'test' },
      task: 'answer',
      ...(limits === undefined ? {} : { limits }),
    })
  const close = async () => {
    await session.close()
    await workshop.close()
    await store.close()
  }
  return { agents, hire, store, close }
}

describe("a session's dollar ceiling", () => {
  it('refuses a hire asking more than the session has, naming the setting; admits it under a larger one', async () => {
    for (const [ceiling, admitted] of [
      [0.02, false],
      [10, true],
    ] as const) {
      await using scratch = await makeScratch()
      const { hire, agents, store, close } = await open(scratch, {
        runs: { sessionBudgetDollars: ceiling },
      })
      try {
        if (admitted) {
          const id = await hire({ budgetDollars: 0.05 })
          assert.equal((await agents.result(id)).status, 'completed')
        } else {
          const error = await hire({ budgetDollars: 0.05 }).then(
            () => assert.fail('admitted'),
            (caught: unknown) => caught,
          )
          assert.ok(EitriError.isInstance(error))
          assert.match(error.message, /runs\.sessionBudgetDollars/)
          assert.deepEqual(await store.listRuns(), [])
        }
      } finally {
        await close()
      }
    }
  })

  it('bounds Run after Run: together they spend no more than the ceiling', async () => {
    await using scratch = await makeScratch()
    const ceiling = 0.03
    const { hire, agents, store, close } = await open(scratch, {
      runs: { sessionBudgetDollars: ceiling },
    })
    try {
      let refused: unknown
      for (let round = 0; round < 20 && refused === undefined; round++) {
        try {
          await agents.result(await hire())
        } catch (error) {
          refused = error
        }
      }
      assert.ok(EitriError.isInstance(refused), `a hire was refused: ${String(refused)}`)
      assert.match(refused.message, /runs\.sessionBudgetDollars/)
      const runs = await store.listRuns()
      // Some Runs completed before the ceiling was reached (each spends about $0.005).
      assert.ok(runs.length >= 2, `${runs.length} Runs`)
      let spent = 0
      for (const run of runs) spent += (await store.getRunMetrics(run.id))?.dollars ?? 0
      assert.ok(spent <= ceiling + 1e-9, `spent $${spent} of $${ceiling}`)
    } finally {
      await close()
    }
  })
})
