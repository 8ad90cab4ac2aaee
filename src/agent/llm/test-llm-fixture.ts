/**
 * @module agent/llm/llm-fixture
 * For tests: an agent runtime running `llm` programs against the AI SDK's mock model, over a
 * real SQLite store and real workspace lines, with tools the test writes (each given the Run's
 * context, so a tool can hire or cancel).
 */
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import type { TestContext } from 'node:test'
import type { LanguageModelV4CallOptions, LanguageModelV4GenerateResult } from '@ai-sdk/provider'
import { MockLanguageModelV4 } from 'ai/test'
import type { ModelCatalog, ModelPolicy, ModelPrice } from '../../provider/model-catalog.ts'
import { openStore } from '../../store/open-store.ts'
import type { ToolCall } from '../../tool/toolset.ts'
import { toolError, type ToolResult } from '../../tool/tool-result.ts'
import { DirectoryTree } from '../../workspace/directory-tree.ts'
import { PERSON_PRINCIPAL } from '../../workspace/fork-owner.ts'
import { WorkspaceLines } from '../../workspace/workspace-lines.ts'
import type { AgentDefInput } from '../agent-def.ts'
import { AgentRuntime } from '../agent-runtime.ts'
import type { AgentRuntimeOptions } from '../agent-runtime-options.ts'
import { DETERMINISTIC_PROGRAMS } from '../deterministic-programs.ts'
import type { ProgramContext, ProgramFactory } from '../program.ts'
import { Roster } from '../roster.ts'
import type { RunTools } from '../run-tools.ts'
import { llmProgramFactory } from './llm-program.ts'

/** One tool of a test: its description, schema and what a call does. */
export interface FixtureTool {
  readonly description?: string
  readonly schema?: Record<string, unknown>
  /** Declared read-only: the loop runs it without committing its intent first. */
  readonly readOnly?: boolean
  call(input: unknown, signal: AbortSignal, context: ProgramContext): Promise<ToolResult>
}

/** What a scripted model step answers, given the call the loop made. */
export type ModelStep = (
  options: LanguageModelV4CallOptions,
) => LanguageModelV4GenerateResult | Promise<LanguageModelV4GenerateResult>

/** The model the fixture's agents name; {@link fixedCatalog} resolves any. */
export const STUB_POLICY = { provider: 'local', model: 'stub-1' } as const

/** An `llm` agent `id` on {@link STUB_POLICY}, with `program` settings and other fields. */
export function llmAgent(
  id: string,
  program: Record<string, unknown> = {},
  extra: Partial<AgentDefInput> = {},
) {
  return {
    id,
    modelPolicy: STUB_POLICY,
    program: { kind: 'llm', ...program },
    ...extra,
  } satisfies AgentDefInput
}

/** A roster of the one agent {@link llmAgent} makes. */
export function llmTeam(
  id: string,
  program: Record<string, unknown> = {},
  extra: Partial<AgentDefInput> = {},
): Roster {
  return Roster.of([llmAgent(id, program, extra)])
}

/** Resolves once `signal` aborts: a scripted step or tool that waits to be cancelled. */
export function aborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve()
    else signal.addEventListener('abort', () => resolve(), { once: true })
  })
}

/** $1 a million input tokens, $2 a million output tokens. */
export const TEST_PRICE: ModelPrice = { input: 1, output: 2 }

/** Usage as a provider reports it. */
export function usage(input: number, output: number): LanguageModelV4GenerateResult['usage'] {
  return {
    inputTokens: { total: input, noCache: input, cacheRead: 0, cacheWrite: 0 },
    outputTokens: { total: output, text: output, reasoning: 0 },
  }
}

/** A step answering with tool calls. */
export function callsTool(
  calls: readonly { readonly name: string; readonly input: unknown }[],
  used = usage(100, 10),
): LanguageModelV4GenerateResult {
  return {
    content: calls.map((call, index) => ({
      type: 'tool-call' as const,
      toolCallId: `call-${index}-${Math.random().toString(36).slice(2, 8)}`,
      toolName: call.name,
      input: JSON.stringify(call.input),
    })),
    finishReason: { unified: 'tool-calls', raw: undefined },
    usage: used,
    warnings: [],
  }
}

/** A step answering with text. */
export function answers(text: string, used = usage(120, 8)): LanguageModelV4GenerateResult {
  return {
    content: [{ type: 'text', text }],
    finishReason: { unified: 'stop', raw: undefined },
    usage: used,
    warnings: [],
  }
}

/** A mock model playing `steps` in order (the last one again when they run out). */
export function scriptedModel(steps: readonly ModelStep[]): MockLanguageModelV4 {
  let next = 0
  return new MockLanguageModelV4({
    provider: 'local',
    modelId: 'stub-1',
    doGenerate: async (options) => {
      const step = steps[Math.min(next++, steps.length - 1)] as ModelStep
      return step(options)
    },
  })
}

/** A catalog resolving every policy to `model` at `price`. */
export function fixedCatalog(
  model: MockLanguageModelV4,
  /** Null: the model has no known price. */
  price: ModelPrice | null = TEST_PRICE,
): ModelCatalog {
  const describe = (policy: ModelPolicy) => ({
    ref: `${policy.provider}:${policy.model}`,
    price: price ?? undefined,
    contextWindow: 100_000,
  })
  return { describe, resolve: (policy) => ({ ...describe(policy), model }) }
}

/** The `add` tool: adds `a` and `b`. */
export const ADD_TOOL: FixtureTool = {
  description: 'Adds two numbers.',
  schema: {
    type: 'object',
    properties: { a: { type: 'number' }, b: { type: 'number' } },
    required: ['a', 'b'],
  },
  call: async (input) => {
    const { a, b } = input as { a: number; b: number }
    return { type: 'success', content: String(a + b), metadata: {} }
  },
}

/** Run tools serving `tools`, each call given the Run's context. */
export function fixtureTools(
  tools: Readonly<Record<string, FixtureTool>>,
  context: ProgramContext,
): RunTools {
  return {
    offered: async () =>
      Object.entries(tools).map(([name, entry]) => ({
        name,
        description: entry.description ?? name,
        input_schema: entry.schema ?? { type: 'object' },
        parameters: entry.schema ?? { type: 'object' },
      })),
    readOnly: (name) => tools[name]?.readOnly === true,
    call: async (call: ToolCall, { signal }) => {
      const entry = tools[call.name]
      if (entry === undefined) return toolError('not_available', `No tool ${call.name}.`)
      return entry.call(call.input, signal, context)
    },
  }
}

/** A runtime whose `llm` programs use `catalog` and `tools` (or the Run tools `tools` makes). */
export async function llmFixture(
  t: TestContext,
  catalog: ModelCatalog,
  tools: Readonly<Record<string, FixtureTool>> | ((context: ProgramContext) => RunTools) = {
    add: ADD_TOOL,
  },
  /** Added to the runtime's: a session's budget, Run tools, programs of other kinds. */
  runtimeOptions: Pick<AgentRuntimeOptions, 'budget' | 'runTools' | 'programs'> = {},
) {
  const base = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'eitri-llm-')))
  await fs.mkdir(path.join(base, 'workspace'))
  const lines = await WorkspaceLines.open({
    main: new DirectoryTree(path.join(base, 'workspace')),
    stateDir: path.join(base, 'state'),
  })
  const store = await openStore(`sqlite:${path.join(base, 'store.sqlite')}`)
  const llm = llmProgramFactory({ catalog, store })
  const withTools: ProgramFactory = (def, hire) => {
    const program = llm(def, hire)
    const toolsOf = (context: ProgramContext) =>
      typeof tools === 'function' ? tools(context) : fixtureTools(tools, context)
    return {
      modelRun: program.modelRun,
      budget: program.budget,
      run: (context) => program.run({ ...context, tools: toolsOf(context) }),
    }
  }
  const runtime = new AgentRuntime({
    store,
    lines,
    line: 'main',
    principal: PERSON_PRINCIPAL,
    ...runtimeOptions,
    programs: { ...DETERMINISTIC_PROGRAMS, llm: withTools, ...runtimeOptions.programs },
  })
  t.after(async () => {
    await runtime.close()
    await store.close()
    await lines.close()
    await fs.rm(base, { recursive: true, force: true })
  })
  return {
    runtime,
    store,
    lines,
    workspace: path.join(base, 'workspace'),
    storePath: path.join(base, 'store.sqlite'),
  }
}

/** `llm` with every tool result a Run gets handed to `onResult` first (for a test to read). */
export function recordingProgram(
  llm: ProgramFactory,
  onResult: (runId: string, call: ToolCall, result: ToolResult) => void,
): ProgramFactory {
  return (def, hire) => {
    const program = llm(def, hire)
    return {
      modelRun: program.modelRun,
      budget: program.budget,
      run: (context) =>
        program.run({
          ...context,
          tools: {
            offered: () => context.tools.offered(),
            call: async (call, options) => {
              const result = await context.tools.call(call, options)
              onResult(context.runId, call, result)
              return result
            },
          },
        }),
    }
  }
}
