/**
 * @module bench/bench-environment
 * program-bench with a model: an environment hires one root `llm` agent in a fresh workshop,
 * lets it work to its end, and then a trusted verifier reads only durable facts (the store's
 * Runs, their journals and metrics, and the workspace the Run's world merged into). The reward
 * is 1 only when every check passes, so a model cannot earn it by saying the right thing: its
 * Runs must show it.
 */
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { llmProgramFactory } from '../agent/llm/llm-program.ts'
import type { Approver } from '../access/approval.ts'
import type { ProgramFactory } from '../agent/program.ts'
import type { ModelCatalog } from '../provider/model-catalog.ts'
import type { JailResult } from '../jail/jail-request.ts'
import type { RunRecord } from '../store/run-record.ts'
import type { RunMetrics } from '../store/run-trace.ts'
import type { Store } from '../store/store.ts'
import { openWorkshop } from '../workshop/workshop.ts'
import { hireRoot, sessionAgents } from './hire-root.ts'
import type { ScriptStep } from './scripted-model.ts'

/** One check of a verifier. */
export interface BenchCheck {
  readonly name: string
  readonly ok: boolean
  readonly detail: string
}

/** What a verifier reads: the store and the workspace, after the root has ended. */
export interface BenchFacts {
  readonly store: Store
  readonly root: RunRecord
  /** Every Run in the store. */
  readonly runs: readonly RunRecord[]
  /** The root's causes: as admitted and as journaled since (results it observed). */
  readonly causedBy: readonly string[]
  /** The main workspace folder (where a merged world lands). */
  readonly workspace: string
  /** Runs a command on main in the workshop's jail, read-only: how a verifier runs what a model wrote. */
  runInJail(command: readonly string[]): Promise<JailResult>
}

/** One environment: a task for a root agent and the checks of its outcome. */
export interface BenchEnvironment {
  readonly name: string
  /** What the root agent is told to do. */
  readonly task: string
  /** The root agent's tools. */
  readonly tools: readonly string[]
  /** The root agent's access. @default 'read-only' */
  readonly access?: 'read-only' | 'workspace-write' | undefined
  /** The value the root's final text must parse to (as exactly one JSON value). */
  readonly expected: unknown
  /** The script a scripted model plays to pass this environment. */
  readonly script: readonly ScriptStep[]
  /** Fills the fresh workspace before the Run. */
  setup?(workspace: string): Promise<void>
  /** The environment's own checks, beside the common ones. */
  verify(facts: BenchFacts): Promise<BenchCheck[]>
}

/** One Run as the report shows it. */
export interface TraceRun {
  readonly id: string
  readonly agent: string | undefined
  readonly parent: string | null
  readonly status: string
  readonly settlement: string
}

/** An environment's verdict and what the Run cost. */
export interface BenchReport {
  readonly env: string
  readonly model: string
  readonly reward: 0 | 1
  readonly checks: readonly BenchCheck[]
  readonly rootId: string | undefined
  /** Every Run, root first, and the root's journal entry types in order. */
  readonly trace: { readonly runs: readonly TraceRun[]; readonly events: readonly string[] }
  readonly ms: number
  /** Model steps of the root. */
  readonly steps: number
  readonly dollars: number
  readonly usage: { readonly inputTokens: number; readonly outputTokens: number }
  readonly inputsId: string | undefined
}

/** How an environment is run. */
export interface RunEnvironmentOptions {
  /** Resolves the root's model. */
  readonly catalog: ModelCatalog
  /** The root's model, as `provider:model`. */
  readonly model: string
  readonly signal?: AbortSignal | undefined
}

/** The root agent's limits: the bench's, the same for every model. */
export const ROOT_LIMITS = { maxModelSteps: 16, budgetDollars: 1 } as const

/** Runs `env`'s root agent on `options.model` in a fresh workshop and verifies what it left. */
export async function runEnvironment(
  env: BenchEnvironment,
  options: RunEnvironmentOptions,
): Promise<BenchReport> {
  const colon = options.model.indexOf(':')
  // The roster's own shape (parsed and checked at hire, like any roster file).
  const root = {
    id: 'root',
    name: `program-bench ${env.name}`,
    program: { kind: 'llm', ...ROOT_LIMITS, autoCompact: false },
    modelPolicy: { provider: options.model.slice(0, colon), model: options.model.slice(colon + 1) },
    tools: [...env.tools],
    access: env.access ?? 'read-only',
  }
  const base = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'eitri-bench-')))
  const workspace = path.join(base, 'workspace')
  await fs.mkdir(workspace)
  await env.setup?.(workspace)
  // The factory needs the workshop's store, which exists once the workshop is open.
  const late: { llm?: ProgramFactory } = {}
  // The bench is the person who asked: once the root has ended it accepts the root's world
  // into main (the only approval it gives), so the verifier reads the merged workspace.
  let accepting = false
  const approver: Approver = async (request) =>
    accepting && request.tool === 'run_settle'
      ? { type: 'approved', by: 'program-bench' }
      : {
          type: 'denied',
          reason: 'program-bench approves nothing during a Run',
          by: 'program-bench',
        }
  const workshop = await openWorkshop({
    workspace,
    stateDir: path.join(base, 'state'),
    configPath: path.join(base, 'config.json'),
    approver,
    programs: {
      llm: (def, hire) => {
        if (late.llm === undefined) throw new Error('the bench hired before its workshop was open')
        return late.llm(def, hire)
      },
    },
  })
  late.llm = llmProgramFactory({ catalog: options.catalog, store: workshop.store })
  const started = performance.now()
  let rootId: string | undefined
  let mergeRefused: string | undefined
  try {
    const session = await workshop.openSession()
    try {
      rootId = await hireRoot(session, {
        agent: root,
        source: `program-bench ${env.name}`,
        task: env.task,
        signal: options.signal,
      })
      if ((await workshop.store.getRun(rootId))?.settlementStatus === 'review') {
        accepting = true
        const merged = await sessionAgents(session).settle(rootId, 'merge')
        // A refused merge leaves the workspace without the root's work: the report says so.
        if (!merged.settled) mergeRefused = merged.reason
      }
    } finally {
      await session.close()
    }
    const ms = performance.now() - started
    const runInJail = (command: readonly string[]) =>
      workshop.jail.run({ command, access: 'read-only', timeoutMs: 60_000 })
    return await report(
      env,
      options.model,
      { store: workshop.store, workspace, runInJail },
      rootId,
      ms,
      mergeRefused,
    )
  } finally {
    await workshop.close()
    await fs.rm(base, { recursive: true, force: true })
  }
}

async function report(
  env: BenchEnvironment,
  model: string,
  where: Pick<BenchFacts, 'store' | 'workspace' | 'runInJail'>,
  rootId: string,
  ms: number,
  mergeRefused: string | undefined,
): Promise<BenchReport> {
  const { store } = where
  const root = await store.getRun(rootId)
  const runs = await store.listRuns()
  const events = await store.listRunEvents(rootId)
  const metrics: RunMetrics | undefined = await store.getRunMetrics(rootId)
  let checks: BenchCheck[]
  if (root === undefined) {
    checks = [check('root exists', false, 'no root Run in the store')]
  } else {
    const causes = events
      .filter((event) => event.type === 'caused-by')
      .map((event) => (event.data as { runId?: unknown } | null)?.runId)
      .filter((id): id is string => typeof id === 'string')
    const facts: BenchFacts = {
      ...where,
      root,
      runs,
      causedBy: [...new Set([...root.causedBy, ...causes])],
    }
    checks = [
      ...commonChecks(facts, env.expected),
      ...(mergeRefused === undefined
        ? []
        : [check('root merged', false, `the merge into main was refused: ${mergeRefused}`)]),
      ...(await env.verify(facts)),
    ]
  }
  const ordered = [...runs].sort((a, b) => (a.id === rootId ? -1 : b.id === rootId ? 1 : 0))
  return {
    env: env.name,
    model,
    reward: checks.every((entry) => entry.ok) ? 1 : 0,
    checks,
    rootId,
    trace: {
      runs: ordered.map((run) => ({
        id: run.id,
        agent: run.agentId,
        parent: run.parentId,
        status: run.status,
        settlement: run.settlementStatus,
      })),
      events: events.map((event) => event.type),
    },
    ms: Math.round(ms),
    steps: metrics?.modelSteps ?? 0,
    dollars: metrics?.dollars ?? 0,
    usage: { inputTokens: metrics?.inputTokens ?? 0, outputTokens: metrics?.outputTokens ?? 0 },
    inputsId: metrics?.inputsId,
  }
}

/** A check named `name`. */
export function check(name: string, ok: boolean, detail: string): BenchCheck {
  return { name, ok, detail }
}

/** The checks of every environment: the root ended well, answered exactly, and left nothing running. */
export function commonChecks(facts: BenchFacts, expected: unknown): BenchCheck[] {
  const { root, runs } = facts
  const active = runs.filter((run) => run.status === 'running' || run.settlementStatus === 'open')
  const parsed = parseOne(root.value)
  return [
    check('root completed', root.status === 'completed', `root is ${describeRun(root)}`),
    check(
      'durably completed',
      root.status === 'completed' && root.endedAt !== null,
      `status ${root.status}, ended at ${String(root.endedAt)}`,
    ),
    check(
      'exact result',
      parsed.ok && JSON.stringify(parsed.value) === JSON.stringify(expected),
      parsed.ok
        ? `answered ${JSON.stringify(parsed.value)}, expected ${JSON.stringify(expected)}`
        : `the final text is not exactly one JSON value: ${JSON.stringify(root.value)}`,
    ),
    check(
      'quiescent',
      active.length === 0,
      active.length === 0 ? '0 active Runs' : active.map(describeRun).join('; '),
    ),
  ]
}

/** `value` parsed as exactly one JSON value: trailing text (a second value, prose) fails. */
function parseOne(value: unknown): { ok: true; value: unknown } | { ok: false } {
  if (typeof value !== 'string') return { ok: false }
  try {
    return { ok: true, value: JSON.parse(value) as unknown }
  } catch {
    return { ok: false }
  }
}

/** A Run in a check's detail: agent, short id, status and settlement. */
export function describeRun(run: RunRecord): string {
  return `${run.agentId ?? '?'} ${run.id.slice(0, 8)} ${run.status}/${run.settlementStatus}`
}
