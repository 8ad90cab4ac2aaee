/**
 * @module eval/capabilities/agent-capability
 * `agent`: the host side of the guest's agent namespace. The guest's library (a roster value,
 * handles, `map`) is built over these functions, but nothing here trusts it: a roster arrives
 * as data and is checked again by the roster's own rules at every call, a handle arrives as a
 * Run id and the session's agents refuse one it did not hire (or hired from another line), and
 * a hire takes only the task, the settlement and the limits: no option names a parent Run.
 */
import { z } from 'zod'
import { EitriError } from '../../errors/eitri-error.ts'
import type { AgentRuns, HireCall } from '../../ports/agent-runs.ts'
import type { RunLog } from '../../ports/run-log.ts'
import type { RosterData, RosterRules } from '../../ports/roster-rules.ts'
import type { ToolContext } from '../../tool/tool-context.ts'
import { capabilityFunction, type Capability, type CapabilityScope } from '../capability.ts'
import { MAX_RESULT_BYTES } from '../eval-limits.ts'
import { parsePlainJson } from '../plain-json.ts'

/** Where a roster value comes from in the host's errors. */
const GUEST_ROSTER = undefined

/** The options `agent.hire` takes. */
const HIRE_OPTION_KEYS: ReadonlySet<string> = new Set(['task', 'settlement', 'limits'])

const rosterData = z.object({ agents: z.array(z.unknown()) }).strict()
const runId = z.string().min(1).max(200)

function agentsOf(ctx: ToolContext, what: string): AgentRuns {
  if (ctx.agents === undefined) {
    throw new EitriError(
      'not_available',
      `agent.${what} needs the session's agents (a store of Runs), and this sandbox has none: it runs outside a workshop session. Hire from js_eval in a session of eitri serve or the eitri CLI.`,
    )
  }
  return ctx.agents
}

function runsOf(ctx: ToolContext): RunLog {
  if (ctx.runs === undefined) {
    throw new EitriError(
      'not_available',
      "handle.observe() needs the store's Run log, and this sandbox has none: it runs outside a workshop session.",
    )
  }
  return ctx.runs
}

/** The hire options, checked for what only this namespace refuses (the agents check the rest). */
function hireOptions(options: unknown): Pick<HireCall, 'task' | 'settlement' | 'limits'> {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new EitriError(
      'invalid_input',
      'agent.hire(roster, agent, options): options must be an object such as {task: "…"}.',
      { data: { field: 'options' } },
    )
  }
  const given = options as Record<string, unknown>
  for (const key of Object.keys(given)) {
    if (HIRE_OPTION_KEYS.has(key)) continue
    throw new EitriError(
      'invalid_input',
      key === 'parentRun'
        ? 'Hire refused, nothing was admitted: parentRun cannot be named from js_eval; a hire from here is a Run of this session (inside a Run, of that Run). Leave parentRun out.'
        : `Hire refused, nothing was admitted: ${key} is an unknown option; agent.hire takes only task, settlement and limits (check the spelling).`,
      { data: { field: key } },
    )
  }
  if (given['settlement'] !== undefined && typeof given['settlement'] !== 'string') {
    throw new EitriError(
      'invalid_input',
      'Hire refused, nothing was admitted: settlement must be one of automatic, review, discard.',
      { data: { field: 'settlement' } },
    )
  }
  return {
    task: given['task'],
    settlement: given['settlement'],
    limits: given['limits'],
  }
}

/** The roster of a hire: a roster value's data, or a roster file read through the session. */
async function rosterSource(
  roster: string | RosterData,
  scope: CapabilityScope,
  rules: RosterRules,
): Promise<NonNullable<HireCall['roster']>> {
  if (typeof roster !== 'string') {
    return { content: rules.check(roster, GUEST_ROSTER), source: 'js_eval' }
  }
  const { ctx, bytes } = scope
  // Read with the session's access: a file the session may not read is refused as for fs.
  const path = await ctx.workspace.resolve(roster, 'read')
  const stat = await ctx.workspace.stat(path, { signal: ctx.signal })
  if (stat === undefined) {
    throw new EitriError(
      'not_found',
      `Roster file not found: ${roster}. Check the path, or write the roster there first (fs.writeFile(${JSON.stringify(roster)}, JSON.stringify(roster))).`,
      { data: { file: roster } },
    )
  }
  await bytes.reserve(stat.size)
  let raw: Uint8Array
  try {
    raw = await ctx.workspace.readFile(path, { maxBytes: MAX_RESULT_BYTES, signal: ctx.signal })
  } catch (error) {
    if (EitriError.isInstance(error) && error.code === 'file_too_large') {
      throw new EitriError(
        'invalid_input',
        `Roster file ${roster} is over the ${MAX_RESULT_BYTES} bytes a roster read from js_eval may have.`,
        { data: { file: roster } },
      )
    }
    throw error
  }
  let text: string
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(raw)
  } catch {
    throw new EitriError('invalid_input', `Roster file ${roster} is not UTF-8 text.`, {
      data: { file: roster },
    })
  }
  const parsed = parsePlainJson(text)
  if (!parsed.ok) {
    throw new EitriError(
      'invalid_input',
      `Roster file ${roster} is refused: ${parsed.message}. A roster file is {"agents": [AgentDef, ...]}.`,
      { data: { file: roster } },
    )
  }
  // Checked here too, so a wrong file is refused before the hire, naming the file.
  rules.check(parsed.value, roster)
  return { content: parsed.value, source: roster }
}

/** The `agent` capability, checking rosters with `rules`. */
export function agentCapability(rules: RosterRules): Capability {
  return {
    name: 'agent',
    purpose:
      'Hire agents as durable Runs and compose them (join, race, map): orchestration written as a program.',
    example: [
      "const team = await agent.roster([{ id: 'fast', program: { kind: 'scripted', delayMs: 10, result: 'fast' } },",
      "  { id: 'slow', program: { kind: 'scripted', delayMs: 5000, result: 'slow' } }])",
      "const a = await agent.hire(team, 'fast', { task: 'go' })",
      "const b = await agent.hire(team, 'slow', { task: 'go' })",
      'const first = await agent.race([a, b]) // b is cancelled, and has stopped',
    ].join('\n'),
    surface: [
      {
        signature: 'roster(defs?: AgentDef[]): Promise<Roster>',
        description:
          'A roster value (immutable: every change answers a new roster) with make(def), revise(id, changes), lookup(idOrRef), list() and select({status?, skill?, skills?, where?}), each answering a promise. `where` is your own function, applied after the other criteria.',
      },
      {
        signature:
          'hire(rosterOrFile: Roster | string, agent: string | {id, version}, {task, settlement?, limits?}): Promise<Handle>',
        description:
          "Hires an agent as a Run of this session (a roster value, or a roster file in the workspace read with the session's access). The handle has id, result() (a passive wait), ownedResult() (the owner's wait: if this eval ends first, the Run is cancelled), observe() (the Run's row and its children) and cancel().",
      },
      {
        signature: 'join(handles: Handle[]): Promise<Result[]>',
        description: "Every Run's result, in order, once all have settled.",
      },
      {
        signature: 'race(handles: Handle[]): Promise<Result>',
        description:
          'The first Run to settle; every other one is cancelled and has stopped when it answers.',
      },
      {
        signature: 'map(items, fn(item, index), {concurrency?}): Promise<any[]>',
        description:
          'fn over every item, at most `concurrency` (default 4) at a time, results in order; the first failure stops starting new items and is thrown.',
      },
      {
        signature: 'handle(id: string): Handle',
        description: 'A handle on a Run this session hired, from its id.',
      },
    ],
    functions: [
      capabilityFunction({
        name: 'roster',
        signature: 'roster(defs?: AgentDef[]): Promise<{agents}>',
        description: 'A roster of these definitions, checked.',
        parameters: z.tuple([z.unknown().optional()]),
        run: async ([defs]) => rules.of((defs ?? []) as readonly unknown[]),
      }),
      capabilityFunction({
        name: 'rosterMake',
        signature: 'rosterMake(roster: {agents}, def: AgentDef): Promise<{agents}>',
        description: 'The roster with `def` made.',
        parameters: z.tuple([rosterData, z.unknown()]),
        run: async ([roster, def]) => rules.make(roster, def),
      }),
      capabilityFunction({
        name: 'rosterRevise',
        signature: 'rosterRevise(roster: {agents}, id: string, changes: object): Promise<{agents}>',
        description: 'The roster with agent `id` revised.',
        parameters: z.tuple([rosterData, z.string(), z.unknown()]),
        run: async ([roster, id, changes]) => rules.revise(roster, id, changes),
      }),
      capabilityFunction({
        name: 'rosterLookup',
        signature: 'rosterLookup(roster: {agents}, ref: string | {id, version}): Promise<AgentDef>',
        description: 'One definition.',
        parameters: z.tuple([rosterData, z.unknown()]),
        run: async ([roster, ref]) => rules.lookup(roster, ref),
      }),
      capabilityFunction({
        name: 'rosterList',
        signature: 'rosterList(roster: {agents}): Promise<AgentDef[]>',
        description: 'Every definition, sorted by id.',
        parameters: z.tuple([rosterData]),
        run: async ([roster]) => rules.check(roster, GUEST_ROSTER).agents,
      }),
      capabilityFunction({
        name: 'rosterSelect',
        signature:
          'rosterSelect(roster: {agents}, selector: {status?, skill?, skills?}): Promise<AgentDef[]>',
        description: 'The definitions meeting every criterion.',
        parameters: z.tuple([rosterData, z.unknown().optional()]),
        run: async ([roster, selector]) => rules.select(roster, selector ?? {}),
      }),
      capabilityFunction({
        name: 'hire',
        signature:
          'hire(roster: {agents} | string, agent: string | {id, version}, options: {task, settlement?, limits?}): Promise<{id}>',
        description: 'Hires an agent as a Run of this session; answers its id.',
        parameters: z.tuple([z.union([z.string().min(1), rosterData]), z.unknown(), z.unknown()]),
        run: async ([roster, agent, options], scope) => {
          const agents = agentsOf(scope.ctx, 'hire')
          const checked = hireOptions(options)
          if (typeof agent !== 'string' && (typeof agent !== 'object' || agent === null)) {
            throw new EitriError(
              'invalid_input',
              'Hire refused, nothing was admitted: agent must be an id ("reviewer") or a ref {id: "reviewer", version: 2}.',
              { data: { field: 'agent' } },
            )
          }
          const id = await agents.hire(
            {
              agent: agent as HireCall['agent'],
              roster: await rosterSource(roster, scope, rules),
              ...checked,
            },
            { signal: scope.ctx.signal },
          )
          return { id }
        },
      }),
      capabilityFunction({
        name: 'result',
        signature: 'result(id: string, owned: boolean): Promise<Result>',
        description: "A Run's settled result; owned: the eval ending cancels the Run.",
        parameters: z.tuple([runId, z.boolean().optional()]),
        run: async ([id, owned], { ctx }) =>
          agentsOf(ctx, 'result').result(id, { owned: owned === true, signal: ctx.signal }),
      }),
      capabilityFunction({
        name: 'observe',
        signature: 'observe(id: string): Promise<Run & {children: string[]}>',
        description: "A Run's row as the store holds it now, with its children's ids.",
        parameters: z.tuple([runId]),
        run: async ([id], { ctx }) => {
          const runs = runsOf(ctx)
          const run = await runs.get(id, { signal: ctx.signal })
          if (run === undefined) {
            throw new EitriError('not_found', `No Run ${id} in the store.`, {
              data: { field: 'id' },
            })
          }
          const children = await runs.list({ parentId: id }, { signal: ctx.signal })
          return { ...run, children: children.map((child) => child.id) }
        },
      }),
      capabilityFunction({
        name: 'cancel',
        signature: 'cancel(id: string): Promise<boolean>',
        description: 'Cancels a Run of this session and waits for it to stop.',
        parameters: z.tuple([runId]),
        run: async ([id], { ctx }) => agentsOf(ctx, 'cancel').cancel(id, { signal: ctx.signal }),
      }),
      capabilityFunction({
        name: 'join',
        signature: 'join(ids: string[]): Promise<Result[]>',
        description: "Every Run's result, in order.",
        parameters: z.tuple([z.array(runId).max(1000)]),
        run: async ([ids], { ctx }) => agentsOf(ctx, 'join').join(ids, { signal: ctx.signal }),
      }),
      capabilityFunction({
        name: 'race',
        signature: 'race(ids: string[]): Promise<Result>',
        description: 'The first Run to settle; the others cancelled and stopped.',
        parameters: z.tuple([z.array(runId).max(1000)]),
        run: async ([ids], { ctx }) => agentsOf(ctx, 'race').race(ids, { signal: ctx.signal }),
      }),
    ],
  }
}
