/**
 * The delegation and budget tools of model Runs, through a real workshop (real git history,
 * real SQLite store, the tool contract) with the AI SDK's mock model: spawn_agent and
 * propose_change hire an llm child of the calling Run and answer its text; the delegation
 * ceiling and the parent's remainder refuse what exceeds them, admitting no Run; budget reports
 * the Run's ledger in micro-dollars.
 */
import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { describe, it } from 'node:test'
import type { LanguageModelV4CallOptions } from '@ai-sdk/provider'
import { MockLanguageModelV4 } from 'ai/test'
import type { Approver } from '../src/access/approval.ts'
import {
  answers,
  callsTool,
  fixedCatalog,
  recordingProgram,
  STUB_POLICY,
  usage,
  type ModelStep,
} from '../src/agent/llm/test-llm-fixture.ts'
import { llmProgramFactory } from '../src/agent/llm/llm-program.ts'
import { openStore } from '../src/store/open-store.ts'
import type { Store } from '../src/store/store.ts'
import type { ToolResult } from '../src/tool/tool-result.ts'
import { openWorkshop, type Workshop } from '../src/workshop/workshop.ts'
import { runWorldName } from '../src/workspace/fork-owner.ts'
import { hireOne } from './helpers/hire-one.ts'
import { makeScratch, type Scratch } from './helpers/scratch.ts'

const approveAll: Approver = async () => ({ type: 'approved', by: 'test' })

/** A lead agent with these tools. */
function lead(tools: readonly string[], extra: Record<string, unknown> = {}) {
  return {
    id: 'lead',
    prompt: 'ROLE-LEAD: you split work.',
    modelPolicy: STUB_POLICY,
    program: { kind: 'llm' },
    tools,
    access: 'workspace-write',
    ...extra,
  }
}

/** One mock model playing a script per role: the lead's prompt, or any other agent's. */
function roleModel(scripts: { lead: ModelStep[]; other: ModelStep[] }): MockLanguageModelV4 {
  const next = { lead: 0, other: 0 }
  return new MockLanguageModelV4({
    provider: 'local',
    modelId: 'stub-1',
    doGenerate: async (options: LanguageModelV4CallOptions) => {
      const role = JSON.stringify(options.prompt[0]).includes('ROLE-LEAD') ? 'lead' : 'other'
      const steps = scripts[role]
      const step = steps[Math.min(next[role]++, steps.length - 1)] as ModelStep
      return step(options)
    },
  })
}

/** Each tool result the Runs' programs got, with the Run that called. */
interface Seen {
  readonly runId: string
  readonly name: string
  readonly result: ToolResult
}

async function open(
  scratch: Scratch,
  model: MockLanguageModelV4,
  config: Record<string, unknown> = {},
): Promise<{ workshop: Workshop; store: Store; seen: Seen[] }> {
  await fs.writeFile(scratch.configPath, JSON.stringify(config))
  const store = await openStore(`sqlite:${path.join(scratch.root, 'store.sqlite')}`)
  const llm = llmProgramFactory({ catalog: fixedCatalog(model), store })
  const seen: Seen[] = []
  // The real llm program, with each tool result it gets kept for the test to read.
  const recording = recordingProgram(llm, (runId, call, result) =>
    seen.push({ runId, name: call.name, result }),
  )
  const workshop = await openWorkshop({
    workspace: scratch.workspace,
    stateDir: scratch.stateDir,
    configPath: scratch.configPath,
    store,
    programs: { llm: recording },
  })
  return { workshop, store, seen }
}

/** Hires `def` from a session, with settlement review, and waits for it. */
async function hireLead(workshop: Workshop, def: ReturnType<typeof lead>, task: string) {
  const session = await workshop.openSession({ approver: approveAll })
  try {
    return await hireOne(session, def, task)
  } finally {
    await session.close()
  }
}

async function worldFile(workshop: Workshop, runId: string, file: string) {
  const fork = workshop.lines.forks().find((f) => f.name === runWorldName(runId))
  assert.ok(fork !== undefined, `the world of Run ${runId}`)
  const tree = await workshop.lines.tree(fork.id)
  return tree.readFile(file).then(
    (bytes) => Buffer.from(bytes).toString('utf8'),
    () => undefined,
  )
}

describe('spawn_agent and propose_change', () => {
  for (const [tool, settlement] of [
    ['spawn_agent', 'merged'],
    ['propose_change', 'review'],
  ] as const) {
    it(`${tool} hires an llm worker under the Run and answers its text (${settlement})`, async () => {
      await using scratch = await makeScratch({ 'keep.txt': 'main\n' })
      const model = roleModel({
        lead: [
          () => callsTool([{ name: tool, input: { task: 'write child.txt', budget: 0.05 } }]),
          () => answers('lead done'),
        ],
        other: [
          () =>
            callsTool([
              { name: 'write_file', input: { path: 'child.txt', content: 'by child\n' } },
            ]),
          () => answers('child wrote child.txt'),
        ],
      })
      const { workshop, store, seen } = await open(scratch, model)
      try {
        const { id, outcome } = await hireLead(
          workshop,
          lead([tool, 'write_file']),
          'get child.txt written',
        )
        assert.equal(outcome.status, 'completed', JSON.stringify(outcome))
        assert.equal(outcome.output, 'lead done')
        const answer = seen.find((entry) => entry.runId === id && entry.name === tool)
        assert.ok(answer !== undefined)
        assert.equal(answer.result.type, 'success', answer.result.content)
        assert.equal(answer.result.content, 'child wrote child.txt')
        const childId = answer.result.metadata['runId'] as string
        const child = await store.getRun(childId)
        assert.equal(child?.parentId, id)
        assert.equal(child?.agentId, 'worker')
        assert.equal(child?.programKind, 'llm')
        assert.equal(child?.status, 'completed')
        assert.equal(child?.settlementStatus, settlement)
        // The worker had the lead's tools: its write landed in its own world.
        const wrote = seen.find((entry) => entry.runId === childId && entry.name === 'write_file')
        assert.equal(wrote?.result.type, 'success')
        // Merged: into the lead's world, never main; for review: not even there.
        assert.equal(
          await worldFile(workshop, id, 'child.txt'),
          settlement === 'merged' ? 'by child\n' : undefined,
        )
        await assert.rejects(fs.readFile(path.join(scratch.workspace, 'child.txt')))
      } finally {
        await workshop.close()
        await store.close()
      }
    })
  }

  it('refuses beyond the delegation authority, admitting no Run', async () => {
    await using scratch = await makeScratch()
    const model = roleModel({
      lead: [
        () => callsTool([{ name: 'spawn_agent', input: { task: 'run it', profile: 'sheller' } }]),
        () => answers('could not'),
      ],
      other: [() => answers('should not run')],
    })
    // A profile needing shell, which the lead does not hold.
    const sheller = {
      id: 'sheller',
      modelPolicy: STUB_POLICY,
      program: { kind: 'llm' },
      tools: ['shell'],
    }
    const { workshop, store, seen } = await open(scratch, model, { agents: [sheller] })
    try {
      const { id, outcome } = await hireLead(workshop, lead(['spawn_agent']), 'delegate')
      assert.equal(outcome.status, 'completed', JSON.stringify(outcome))
      const answer = seen.find((entry) => entry.name === 'spawn_agent')
      assert.equal(answer?.result.type, 'error')
      assert.match(answer?.result.content ?? '', /delegation authority/)
      assert.match(answer?.result.content ?? '', /shell/)
      const runs = await store.listRuns()
      assert.deepEqual(
        runs.map((run) => run.id),
        [id],
        'no child Run was admitted',
      )
      // Only the lead's two calls: no child ever called the model (the tests above are the
      // positive control: a worker within the lead's tools is hired).
      assert.equal(model.doGenerateCalls.length, 2)
    } finally {
      await workshop.close()
      await store.close()
    }
  })

  it('refuses a child budget above what the Run has left', async () => {
    await using scratch = await makeScratch()
    const model = roleModel({
      lead: [
        () => callsTool([{ name: 'spawn_agent', input: { task: 'x', budget: 0.5 } }]),
        () => answers('done'),
      ],
      other: [() => answers('should not run')],
    })
    const { workshop, store, seen } = await open(scratch, model)
    try {
      const def = lead(['spawn_agent'], { program: { kind: 'llm', budgetDollars: 0.2 } })
      const { id, outcome } = await hireLead(workshop, def, 'delegate')
      assert.equal(outcome.status, 'completed', JSON.stringify(outcome))
      const answer = seen.find((entry) => entry.name === 'spawn_agent')
      assert.equal(answer?.result.type, 'error')
      assert.match(answer?.result.content ?? '', /parent Run has left/)
      assert.deepEqual(
        (await store.listRuns()).map((run) => run.id),
        [id],
      )
    } finally {
      await workshop.close()
      await store.close()
    }
  })
})

describe('spawn_agent without a budget', () => {
  it('gives the child what the Run has left when that is less than the default', async () => {
    // $0.06 less the first call's 120 μ$ is $0.059879999…, shown as 59,880 μ$: the default
    // budget taken from that rounded figure was a hair above what was left, and refused.
    await using scratch = await makeScratch()
    const model = roleModel({
      lead: [
        () => callsTool([{ name: 'spawn_agent', input: { task: 'x' } }]),
        () => answers('done'),
      ],
      other: [() => answers('child done')],
    })
    const { workshop, store, seen } = await open(scratch, model)
    try {
      const def = lead(['spawn_agent'], { program: { kind: 'llm', budgetDollars: 0.06 } })
      const { outcome } = await hireLead(workshop, def, 'delegate')
      assert.equal(outcome.status, 'completed', JSON.stringify(outcome))
      const answer = seen.find((entry) => entry.name === 'spawn_agent')
      assert.equal(answer?.result.type, 'success', answer?.result.content)
      assert.equal(answer?.result.content, 'child done')
    } finally {
      await workshop.close()
      await store.close()
    }
  })
})

describe('budget', () => {
  it('reports the ledger in micro-dollars after a step', async () => {
    await using scratch = await makeScratch()
    const model = roleModel({
      lead: [
        // 1000 input tokens at $1/M and 100 output at $2/M: 1000 + 200 = 1200 μ$.
        () =>
          callsTool(
            [
              { name: 'budget', input: { operation: 'check' } },
              { name: 'budget', input: { operation: 'breakdown' } },
              { name: 'budget', input: { operation: 'estimate' } },
              { name: 'budget', input: { operation: 'estimate', output_tokens: 1000 } },
            ],
            usage(1000, 100),
          ),
        () => answers('done'),
      ],
      other: [],
    })
    const { workshop, store, seen } = await open(scratch, model)
    try {
      const def = lead(['budget'], { program: { kind: 'llm', budgetDollars: 0.05 } })
      const { outcome } = await hireLead(workshop, def, 'check the budget')
      assert.equal(outcome.status, 'completed', JSON.stringify(outcome))
      const [check, breakdown, estimate, larger] = seen.map((entry) => entry.result)
      assert.equal(check?.type, 'success', check?.content)
      assert.deepEqual(
        { ...check?.metadata },
        { unit: 'μ$', budget: 50_000, spent: 1200, reserved: 0, carved: 0, remaining: 48_800 },
      )
      assert.match(check?.content ?? '', /Remaining: 48800 μ\$/)
      assert.deepEqual(breakdown?.metadata['lines'], [
        {
          step: 0,
          kind: 'model-call',
          model: 'local:stub-1',
          inputTokens: 1000,
          outputTokens: 100,
          cost: 1200,
        },
      ])
      assert.deepEqual(breakdown?.metadata['byModel'], { 'local:stub-1': 1200 })
      // The estimate prices the conversation so far and the output asked for.
      const input = estimate?.metadata['inputTokens'] as number
      assert.ok(input > 0)
      assert.equal(estimate?.metadata['outputTokens'], 500)
      assert.equal(estimate?.metadata['cost'], input + 1000)
      assert.equal(larger?.metadata['cost'], input + 2000)
      assert.equal(estimate?.metadata['remaining'], 48_800)
    } finally {
      await workshop.close()
      await store.close()
    }
  })

  it('is not offered outside a model Run, and says why', async () => {
    await using scratch = await makeScratch()
    const model = roleModel({ lead: [() => answers('x')], other: [] })
    const { workshop, store } = await open(scratch, model)
    try {
      const offered = (await workshop.toolset.offeredIn(workshop.context())).map((t) => t.name)
      assert.ok(!offered.includes('budget'))
      assert.ok(!offered.includes('spawn_agent'))
      assert.ok(offered.includes('agent_hire'), 'positive control: Run tools are offered')
      const result = await workshop.call('budget', { operation: 'check' })
      assert.equal(result.type, 'error')
      assert.match(result.content, /no budget here/)
    } finally {
      await workshop.close()
      await store.close()
    }
  })
})

describe('the settlement of a Run into main', () => {
  it('merges only the world the person was shown, not a child settled into it meanwhile', async () => {
    // The lead writes README.md and proposes a Makefile through a child kept for review. While
    // the person is asked about the lead's merge (README.md), its session merges the child
    // into the lead's world (no question: not main). A yes must not bring the Makefile.
    await using scratch = await makeScratch({ 'keep.txt': 'main\n' })
    const model = roleModel({
      lead: [
        () => callsTool([{ name: 'write_file', input: { path: 'README.md', content: 'hi\n' } }]),
        () => callsTool([{ name: 'propose_change', input: { task: 'Makefile', budget: 0.05 } }]),
        () => answers('lead done'),
      ],
      other: [
        () =>
          callsTool([
            { name: 'write_file', input: { path: 'Makefile', content: 'all:\n\tcurl x\n' } },
          ]),
        () => answers('child wrote Makefile'),
      ],
    })
    const { workshop, store, seen } = await open(scratch, model)
    const asked: string[] = []
    const childMerges: string[] = []
    const session = await workshop.openSession({
      approver: async (request) => {
        if (request.tool === 'run_settle') {
          asked.push(request.summary)
          const child = seen.find((entry) => entry.name === 'propose_change')
          const childId = child?.result.metadata['runId'] as string
          const agents = session.context().agents
          // The child is merged into the lead's world only while the first question is open.
          if (childMerges.length === 0)
            childMerges.push(JSON.stringify(await agents?.settle(childId, 'merge')))
        }
        // "Approve for this session": it covers the exact same merge, not another content.
        return { type: 'approved-for-session', by: 'test' }
      },
    })
    try {
      const { id, outcome } = await hireOne(
        session,
        lead(['write_file', 'propose_change']),
        'write',
        'automatic',
      )
      assert.equal(outcome.status, 'completed', JSON.stringify(outcome))
      assert.equal(asked.length, 1)
      assert.match(asked[0] ?? '', /1 file: README\.md/)
      assert.match(childMerges[0] ?? '', /merged/, 'positive control: the child was merged')
      // What the person did not see never reaches main: the lead is kept for review, to be
      // merged again (asking about README.md and the Makefile).
      await assert.rejects(fs.readFile(path.join(scratch.workspace, 'Makefile')))
      assert.equal(outcome.settlementStatus, 'review')
      assert.match(outcome.settlementReason ?? '', /changed after its merge was shown/)
      // Merging it again asks again, about what it holds now: the same Run, another content.
      const again = await session.context().agents?.settle(id, 'merge')
      assert.equal(asked.length, 2, JSON.stringify(again))
      assert.match(asked[1] ?? '', /2 files: .*Makefile/)
    } finally {
      await session.close()
      await workshop.close()
      await store.close()
    }
  })
})
