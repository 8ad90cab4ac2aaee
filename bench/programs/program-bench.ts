/**
 * program-bench, level 1 (no model): a js_eval program runs as the program of a root Run in a
 * real workshop, and a trusted verifier on the host then reads only durable facts from the
 * store: the root completed with the exact result, exactly two children with the expected
 * agents and statuses, every child structurally the root's, no other Run, and none still
 * running or unsettled. The reward is 1 only when every check passes.
 *
 * The root is hired through a workshop session like any agent; its program (the bench's
 * replay) makes one tool call, `js_eval` with the task's code, through the Run's own
 * tools: the code runs through the tool contract in the Run's world, and `agent` there hires
 * children of that Run.
 */
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { DETERMINISTIC_PROGRAMS } from '../../src/agent/deterministic-programs.ts'
import type { Program, ProgramFactory } from '../../src/agent/program.ts'
import type { RunRecord } from '../../src/store/run-record.ts'
import type { Store } from '../../src/store/store.ts'
import { hireRoot } from '../../src/bench/hire-root.ts'
import { openWorkshop } from '../../src/workshop/workshop.ts'

/** One bench task: a program and what its Runs must show once it has ended. */
export interface BenchTask {
  readonly name: string
  /** The js_eval code the root Run runs. */
  readonly code: string
  /** The root's exact result: the eval's answer. */
  readonly value: string
  /** Each child's agent id and the status it must end with. */
  readonly children: Readonly<Record<string, 'completed' | 'cancelled'>>
}

/** One check of the verifier. */
export interface BenchCheck {
  readonly name: string
  readonly ok: boolean
  readonly detail: string
}

/** A task's verdict. */
export interface BenchVerdict {
  readonly task: string
  readonly reward: 0 | 1
  readonly checks: readonly BenchCheck[]
  readonly rootId: string | undefined
  readonly ms: number
}

const HERE = path.dirname(new URL(import.meta.url).pathname)

/** The level-1 tasks, read from their program files. */
export async function levelOneTasks(): Promise<BenchTask[]> {
  const read = (name: string) => fs.readFile(path.join(HERE, name), 'utf8')
  return [
    {
      name: 'join-v1',
      code: await read('join-v1.js'),
      value: '["left","right"]',
      children: { left: 'completed', right: 'completed' },
    },
    {
      name: 'race-v1',
      code: await read('race-v1.js'),
      value: '"fast"',
      children: { fast: 'completed', slow: 'cancelled' },
    },
  ]
}

/**
 * The definition whose Runs replay their task: one js_eval call with it as the code. Program
 * kinds are a closed list, so it is a `scripted` agent the bench's factory recognizes.
 */
const CONDUCTOR = {
  id: 'conductor',
  program: { kind: 'scripted' },
  tools: ['js_eval'],
  metadata: { program: 'replay' },
} as const

/** The bench's scripted programs: the conductor's replays its task, the others are eitri's. */
export const benchPrograms: ProgramFactory = (def, hire) =>
  def.metadata['program'] === 'replay'
    ? replay
    : (DETERMINISTIC_PROGRAMS['scripted'] as ProgramFactory)(def, hire)

/** The task's code, run as one js_eval call through the Run's own tools. */
const replay: Program = {
  async run(context) {
    const result = await context.tools.call(
      { name: 'js_eval', input: { code: String(context.task) } },
      { signal: context.signal },
    )
    return result.type === 'success'
      ? { status: 'completed', value: result.content }
      : { status: 'failed', error: `${result.code}: ${result.content}` }
  },
}

/** Runs the task's program as a root Run in a fresh workshop, then verifies the store. */
export async function runTask(task: BenchTask): Promise<BenchVerdict> {
  const base = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'eitri-program-bench-')))
  const workspace = path.join(base, 'workspace')
  await fs.mkdir(workspace)
  const workshop = await openWorkshop({
    workspace,
    stateDir: path.join(base, 'state'),
    configPath: path.join(base, 'config.json'),
    programs: { scripted: benchPrograms },
  })
  const started = Date.now()
  let rootId: string | undefined
  try {
    const session = await workshop.openSession()
    try {
      rootId = await hireRoot(session, {
        agent: CONDUCTOR,
        source: 'program-bench',
        task: task.code,
      })
    } finally {
      await session.close()
    }
    const checks = await verify(workshop.store, rootId, task)
    return {
      task: task.name,
      reward: checks.every((check) => check.ok) ? 1 : 0,
      checks,
      rootId,
      ms: Date.now() - started,
    }
  } finally {
    await workshop.close()
    await fs.rm(base, { recursive: true, force: true })
  }
}

/** The trusted verifier: only what the store holds. */
export async function verify(
  store: Store,
  rootId: string | undefined,
  task: BenchTask,
): Promise<BenchCheck[]> {
  const check = (name: string, ok: boolean, detail: string): BenchCheck => ({ name, ok, detail })
  const root = rootId === undefined ? undefined : await store.getRun(rootId)
  if (root === undefined) return [check('root exists', false, 'no root Run in the store')]
  const all = await store.listRuns()
  const children = await store.listRuns({ parentId: root.id })
  const expected = Object.keys(task.children).sort()
  const agents = children.map((child) => child.agentId ?? '?').sort()
  const wrongStatus = children.filter(
    (child) => task.children[child.agentId ?? ''] !== child.status,
  )
  const strays = all.filter((run) => run.id !== root.id && run.parentId !== root.id)
  const active = all.filter((run) => run.status === 'running' || run.settlementStatus === 'open')
  return [
    check('root completed', root.status === 'completed', `root is ${describe(root)}`),
    check(
      'exact result',
      root.value === task.value,
      `root value ${JSON.stringify(root.value)}, expected ${JSON.stringify(task.value)}`,
    ),
    check('root is a root', root.parentId === null, `root's parent: ${String(root.parentId)}`),
    check(
      'two children with the expected agents',
      children.length === 2 && JSON.stringify(agents) === JSON.stringify(expected),
      `children agents ${agents.join(', ') || '(none)'}, expected ${expected.join(', ')}`,
    ),
    check(
      'structural parentage',
      strays.length === 0 && children.every((child) => child.parentId === root.id),
      strays.length === 0
        ? 'every other Run is a child of the root'
        : `Runs outside the root's tree: ${strays.map(describe).join('; ')}`,
    ),
    check(
      'children ended as expected (the loser cancelled)',
      children.length > 0 && wrongStatus.length === 0,
      children.map(describe).join('; ') || '(no children)',
    ),
    check(
      'zero active Runs',
      active.length === 0,
      active.length === 0 ? 'none running or unsettled' : active.map(describe).join('; '),
    ),
  ]
}

function describe(run: RunRecord): string {
  return `${run.agentId ?? '?'} ${run.id.slice(0, 8)} ${run.status}/${run.settlementStatus}`
}
