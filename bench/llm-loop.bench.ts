/**
 * The llm loop's own cost per model step: a Run whose mock model calls the `add` tool N times
 * before answering (once as a tool with effects, whose intent is committed before it runs,
 * once declared read-only, whose call rides in the next model call's commit), hired on a real agent runtime (SQLite store, journal, chat and metrics
 * written every step), against a bare AI SDK `generateText` loop with the same mock model and
 * the same tool, run in the same process. Both are measured with 1 and with 1 + N steps; the
 * difference divided by N is the cost of one step, without the Run's fixed admission and
 * settlement.
 *
 * Each Run's store is warmed first until its write-ahead log is reused (its size stays put over
 * a few Runs): a long-lived server's store writes over a log that has been checkpointed, while
 * a fresh store's first megabytes of commits grow the file, and a sync that extends a file
 * costs about twice one that overwrites (decision 0025). Both figures are printed.
 */
import { generateText, jsonSchema, tool, type ModelMessage, type ToolSet } from 'ai'
import { MockLanguageModelV4 } from 'ai/test'
import fs from 'node:fs'
import { performance } from 'node:perf_hooks'
import type { TestContext } from 'node:test'
import type { LanguageModelV4CallOptions } from '@ai-sdk/provider'
import { Roster } from '../src/agent/roster.ts'
import {
  ADD_TOOL,
  answers,
  callsTool,
  fixedCatalog,
  llmFixture,
} from '../src/agent/llm/test-llm-fixture.ts'
import { medianMicros, micros, report } from './measure.ts'

const EXTRA_STEPS = 10
const ITERATIONS = 15

/** A mock model that calls `add` until the prompt holds `calls` tool results, then answers. */
function addingModel(calls: number): MockLanguageModelV4 {
  return new MockLanguageModelV4({
    provider: 'local',
    modelId: 'stub-1',
    doGenerate: async (options: LanguageModelV4CallOptions) => {
      const done = options.prompt.filter((message) => message.role === 'tool').length
      return done < calls
        ? callsTool([{ name: 'add', input: { a: done, b: 1 } }])
        : answers(`done after ${done} calls`)
    },
  })
}

const cleanups: (() => Promise<void>)[] = []
const context = { after: (cleanup: () => Promise<void>) => cleanups.push(cleanup) }

const roster = Roster.of([
  {
    id: 'adder',
    prompt: 'You add numbers with the add tool.',
    modelPolicy: { provider: 'local', model: 'stub-1' },
    program: { kind: 'llm', autoCompact: false },
  },
])

/** Store time (µs) and calls of the last measured Run, by method. */
let storeTime = new Map<string, { micros: number; calls: number }>()

/**
 * Runs `run` until the store's write-ahead log has not grown over three runs in a row (it is
 * being written over after a checkpoint), at most 200 times.
 */
async function warmLog(storePath: string, run: () => Promise<unknown>): Promise<void> {
  const size = () => fs.statSync(`${storePath}-wal`, { throwIfNoEntry: false })?.size ?? 0
  let still = 0
  for (let index = 0; index < 200 && still < 3; index++) {
    const before = size()
    await run()
    still = size() === before ? still + 1 : 0
  }
}

/**
 * Median µs of one Run with `calls` tool calls (calls + 1 model steps), on a fresh store or on
 * one whose log is warmed.
 */
async function loopRun(calls: number, readOnly: boolean, warm: boolean): Promise<number> {
  const { runtime, store, storePath } = await llmFixture(
    context as unknown as TestContext,
    fixedCatalog(addingModel(calls)),
    { add: { ...ADD_TOOL, readOnly } },
  )
  // Where a step's time goes: every store method is timed.
  for (const name of [
    'appendRunStep',
    'appendRunEvents',
    'appendChatMessages',
    'recordRunMetrics',
  ] as const) {
    const original = store[name].bind(store) as (...args: unknown[]) => Promise<unknown>
    ;(store as unknown as Record<string, unknown>)[name] = async (...args: unknown[]) => {
      const start = performance.now()
      try {
        return await original(...args)
      } finally {
        const entry = storeTime.get(name) ?? { micros: 0, calls: 0 }
        storeTime.set(name, {
          micros: entry.micros + (performance.now() - start) * 1000,
          calls: entry.calls + 1,
        })
      }
    }
  }
  const run = async () => {
    storeTime = new Map()
    const handle = await runtime.hire(roster, 'adder', { task: 'Add.' })
    const result = await handle.result()
    if (result.status !== 'completed') throw new Error(`the Run ended ${result.status}`)
  }
  if (warm) await warmLog(storePath, run)
  return medianMicros(run, ITERATIONS)
}

// Built as the loop builds its tools: an untyped JSON schema, no `execute`.
const tools: ToolSet = {
  add: tool({
    description: 'Adds two numbers.',
    inputSchema: jsonSchema({
      type: 'object',
      properties: { a: { type: 'number' }, b: { type: 'number' } },
      required: ['a', 'b'],
    }),
  }),
}

/** Median µs of a bare generateText loop with `calls` tool calls, the tool run in between. */
async function bareRun(calls: number): Promise<number> {
  const model = addingModel(calls)
  return medianMicros(async () => {
    const messages: ModelMessage[] = [{ role: 'user', content: 'Add.' }]
    for (;;) {
      const result = await generateText({ model, messages, tools })
      messages.push(...result.response.messages)
      if (result.toolCalls.length === 0) return
      const outputs = []
      for (const call of result.toolCalls) {
        const answer = await ADD_TOOL.call(
          call.input,
          new AbortController().signal,
          undefined as never,
        )
        outputs.push({
          type: 'tool-result' as const,
          toolCallId: call.toolCallId,
          toolName: call.toolName,
          output: { type: 'text' as const, value: answer.content },
        })
      }
      messages.push({ role: 'tool', content: outputs })
    }
  }, ITERATIONS * 4)
}

try {
  const bareOne = await bareRun(0)
  const bareMany = await bareRun(EXTRA_STEPS)
  const bareStep = (bareMany - bareOne) / EXTRA_STEPS
  for (const [readOnly, warm] of [
    [false, false],
    [true, false],
    [false, true],
    [true, true],
  ] as const) {
    const kind = readOnly ? 'read-only' : 'effectful'
    const where = warm ? 'store warmed' : 'fresh store'
    const loopOne = await loopRun(0, readOnly, warm)
    const loopMany = await loopRun(EXTRA_STEPS, readOnly, warm)
    const loopStep = (loopMany - loopOne) / EXTRA_STEPS
    report(
      `llm Run, ${EXTRA_STEPS + 1} steps, ${kind} add, ${where}`,
      loopMany,
      bareMany,
      'bare generateText loop',
    )
    report(
      `llm loop, one step (${kind} add + model call), ${where}`,
      loopStep,
      bareStep,
      'bare generateText step',
    )
    process.stdout.write(
      `  a Run's fixed cost (1 step, admission to settlement): ${micros(loopOne)}; loop overhead per step: ${micros(loopStep - bareStep)}\n`,
    )
    const perStep = [...storeTime].map(
      ([name, entry]) =>
        `${name} ${(entry.calls / (EXTRA_STEPS + 1)).toFixed(1)}×, ${micros(entry.micros / (EXTRA_STEPS + 1))}`,
    )
    process.stdout.write(`  store writes per step (last Run, averaged): ${perStep.join('; ')}\n`)
  }
} finally {
  for (const cleanup of cleanups.reverse()) await cleanup()
}
