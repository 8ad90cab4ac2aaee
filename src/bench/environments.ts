/**
 * @module bench/environments
 * The program-bench environments with a model at the root. In the first three the root writes
 * one js_eval program that orchestrates agents (its scripted model writes the program the
 * level-1 bench replays); in `fix-test-v1` it fixes a failing test with file tools and a shell.
 */
import {
  check,
  describeRun,
  type BenchCheck,
  type BenchEnvironment,
  type BenchFacts,
} from './bench-environment.ts'
import { fixTestV1 } from './fix-test-env.ts'
import { answer, callTool, lastToolResult } from './scripted-model.ts'

/** join-v1's orchestration program, as its scripted model writes it in js_eval. */
export const JOIN_V1 = `const team = await agent.roster([
  { id: 'left', program: { kind: 'scripted', delayMs: 10, result: 'left' } },
  { id: 'right', program: { kind: 'scripted', delayMs: 30, result: 'right' } },
])
const results = await agent.join([
  await agent.hire(team, 'left', { task: 'the first half' }),
  await agent.hire(team, 'right', { task: 'the second half' }),
])
JSON.stringify(results.map((result) => result.value))`

const RACE_V1 = `const team = await agent.roster([
  { id: 'fast', program: { kind: 'scripted', delayMs: 10, result: 'fast' } },
  { id: 'slow', program: { kind: 'scripted', delayMs: 5000, result: 'slow' } },
])
const slow = await agent.hire(team, 'slow', { task: 'answer' })
const fast = await agent.hire(team, 'fast', { task: 'answer' })
const winner = await agent.race([slow, fast])
JSON.stringify(winner.value)`

const SELF_PROGRAMMING_V1 = `const team = await agent.roster([
  { id: 'counter', program: { kind: 'scripted', delayMs: 10, result: 23 } },
  { id: 'physicist', program: { kind: 'scripted', delayMs: 20, result: 2 } },
  { id: 'checker', program: { kind: 'scripted', delayMs: 5, result: true } },
])
const [answer, particles, verified] = await agent.join([
  await agent.hire(team, 'counter', { task: 'count the answer' }),
  await agent.hire(team, 'physicist', { task: 'count the particles' }),
  await agent.hire(team, 'checker', { task: 'verify the count' }),
])
JSON.stringify({ answer: answer.value, particles: particles.value, verified: verified.value })`

const ORCHESTRATE =
  'Answer with the result alone, as one JSON value and nothing else. Work by writing one js_eval program: in it, `agent.roster([...definitions])` makes a team, `agent.hire(team, id, {task})` hires one, `agent.join([...])` waits for all, `agent.race([...])` takes the first and cancels the rest.'

/** The script of a root that runs `code` in js_eval and answers what it returned. */
function orchestrating(code: string) {
  return [callTool('js_eval', { code }), answer(lastToolResult)]
}

/**
 * The children of the root, by agent id, must be exactly `expected` (each ending with its
 * status), all structurally the root's, and every one's result observed by the root.
 */
function childChecks(
  facts: BenchFacts,
  expected: Readonly<Record<string, 'completed' | 'cancelled'>>,
  options: { readonly observed: readonly string[]; readonly merged: boolean },
): BenchCheck[] {
  const { root, runs } = facts
  const children = runs.filter((run) => run.parentId === root.id)
  const strays = runs.filter((run) => run.id !== root.id && run.parentId !== root.id)
  const agents = children.map((child) => child.agentId ?? '?').sort()
  const wanted = Object.keys(expected).sort()
  const wrong = children.filter(
    (child) =>
      expected[child.agentId ?? ''] !== child.status ||
      (options.merged && child.status === 'completed' && child.settlementStatus !== 'merged'),
  )
  const observedIds = children
    .filter((child) => options.observed.includes(child.agentId ?? ''))
    .map((child) => child.id)
  const unobserved = observedIds.filter((id) => !facts.causedBy.includes(id))
  return [
    check(
      `${wanted.length} children with the expected ids`,
      JSON.stringify(agents) === JSON.stringify(wanted),
      `children ${agents.join(', ') || '(none)'}, expected ${wanted.join(', ')}`,
    ),
    check(
      'structural parentage',
      strays.length === 0 && root.parentId === null,
      strays.length === 0
        ? 'the root is a root and every other Run is its child'
        : `Runs outside the root's tree: ${strays.map(describeRun).join('; ')}`,
    ),
    check(
      'results observed',
      observedIds.length === options.observed.length && unobserved.length === 0,
      unobserved.length === 0
        ? `the root's causes hold ${observedIds.length} children`
        : `the root never observed: ${unobserved.join(', ')}`,
    ),
    check(
      options.merged ? 'children completed and merged' : 'children ended as expected',
      children.length > 0 && wrong.length === 0,
      children.map(describeRun).join('; ') || '(no children)',
    ),
  ]
}

/** Two agents joined: the root answers both results in order. */
export const joinV1: BenchEnvironment = {
  name: 'join-v1',
  task: `Hire two scripted agents, "left" (result "left") and "right" (result "right"), wait for both, and answer the list of their results in that order. ${ORCHESTRATE}`,
  tools: ['js_eval'],
  expected: ['left', 'right'],
  script: orchestrating(JOIN_V1),
  verify: async (facts) =>
    childChecks(
      facts,
      { left: 'completed', right: 'completed' },
      {
        observed: ['left', 'right'],
        merged: false,
      },
    ),
}

/** A race: the fast agent's result wins and the slow one is cancelled. */
export const raceV1: BenchEnvironment = {
  name: 'race-v1',
  task: `Race a scripted agent "slow" (delayMs 5000, result "slow") against "fast" (delayMs 10, result "fast"); answer the winner's result and leave no agent running. ${ORCHESTRATE}`,
  tools: ['js_eval'],
  expected: 'fast',
  script: orchestrating(RACE_V1),
  verify: async (facts) =>
    childChecks(
      facts,
      { fast: 'completed', slow: 'cancelled' },
      {
        observed: ['fast'],
        merged: false,
      },
    ),
}

/** The root programs a team of three specialists and combines what they found. */
export const selfProgrammingV1: BenchEnvironment = {
  name: 'self-programming-v1',
  task: `Define three scripted specialists: "counter" (result 23), "physicist" (result 2) and "checker" (result true); hire all three, wait for them, and answer {"answer": counter's result, "particles": physicist's, "verified": checker's}. ${ORCHESTRATE}`,
  tools: ['js_eval'],
  expected: { answer: 23, particles: 2, verified: true },
  script: orchestrating(SELF_PROGRAMMING_V1),
  verify: async (facts) =>
    childChecks(
      facts,
      { counter: 'completed', physicist: 'completed', checker: 'completed' },
      { observed: ['counter', 'physicist', 'checker'], merged: true },
    ),
}

/** Every environment by name. */
export const ENVIRONMENTS: Readonly<Record<string, BenchEnvironment>> = Object.freeze({
  'join-v1': joinV1,
  'race-v1': raceV1,
  'self-programming-v1': selfProgrammingV1,
  'fix-test-v1': fixTestV1,
})
