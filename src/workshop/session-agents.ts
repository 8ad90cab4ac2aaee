/**
 * @module workshop/session-agents
 * The agents one session may hire, and its Runs. Each session has its own agent runtime, made
 * at its first hire: its root Runs fork from the session's line, are owned by the session's
 * principal, and get no more than the session holds (its tools and its access, read at each
 * hire). A Run is the session's to wait on, compose, cancel and settle only from the line it
 * was hired on; any Run in the store may be waited for, except by a session that does not
 * see every fork, which reads only its own Runs and their children (run-fence.ts). The workshop shares one lease keeper
 * among its sessions, so a server killed outright leaves Runs that the next one ends.
 */
import type { AgentRuntime } from '../agent/agent-runtime.ts'
import type { Authority } from '../agent/delegation-ceiling.ts'
import { join, race } from '../agent/run-composition.ts'
import type { RunHandle } from '../agent/run-handle.ts'
import type { RunLeases } from '../agent/run-lease.ts'
import type { MergeApprover } from '../agent/run-settlement.ts'
import type { ProgramFactory } from '../agent/program.ts'
import type { RunToolsFactory } from '../agent/run-tools.ts'
import { Roster } from '../agent/roster.ts'
import { BudgetLedger } from '../agent/llm/model-budget.ts'
import { EitriError } from '../errors/eitri-error.ts'
import type { AgentRuns, HireCall, RunWaitOutcome, RunWaitOptions } from '../ports/agent-runs.ts'
import { SWEPT_REASONS, type RunRecord } from '../store/run-record.ts'
import type { Store } from '../store/store.ts'
import type { Principal, WorkspaceLines } from '../workspace/workspace-lines.ts'
import { pause } from '../util/pause.ts'
import { hiredWithin } from './run-fence.ts'
import { displayName } from '../workspace/fork-registry.ts'
import { MAIN_LINE } from '../ports/line-control.ts'

/** What a session's agents are made from. */
export interface SessionAgentParts {
  readonly store: Store
  readonly lines: WorkspaceLines
  /** The workshop's lease keeper, started at the first hire of any session. */
  readonly leases: () => Promise<RunLeases>
  readonly principal: Principal
  /** The session's line now: root Runs fork from it, and its Runs are used from it only. */
  readonly line: () => string
  /** The session's authority now: the ceiling of its root Runs. */
  readonly ceiling: () => Authority
  /** Asks the session's person before a Run's world is merged into main. */
  readonly approveMerge: MergeApprover | undefined
  /** The roster hires use when they name none (the configuration's `agents`). */
  readonly roster: Roster
  /** Who the Runs act for, as their rows say: the session. */
  readonly actor: string
  /** The most Runs (children included) the session may have running at once. */
  readonly maxActive: number
  /** The most dollars the session's Runs may spend together (`runs.sessionBudgetDollars`). */
  readonly budgetDollars?: number | undefined
  /** How deep Runs may hire Runs (a root Run is at depth 1). @default the runtime's (4) */
  readonly maxDepth?: number | undefined
  /** The program of each kind. @default the runtime's (echo and scripted) */
  readonly programs?: Readonly<Record<string, ProgramFactory>> | undefined
  /** Makes each Run's tools (in its world, as the Run). */
  readonly runTools?: RunToolsFactory | undefined
  /** Waits only for the Runs this session hired and their children (run-fence.ts); any Run if unset. */
  readonly hiredBy?: string | undefined
}

/** A session's agents, with the way to stop its Runs when the session ends. */
export interface SessionAgents extends AgentRuns {
  /** The ids of the Runs the session hired from `line`. */
  runsHiredFrom(line: string): readonly string[]
  /** Cancels the Runs the session hired from `line` (children first) and waits for them to settle. */
  cancelRunsOf(line: string): Promise<void>
  /** Cancels the session's Runs and waits for them to settle. Idempotent. */
  close(): Promise<void>
}

/** A line's name as a person reads it. */
function lineName(lines: WorkspaceLines, line: string): string {
  try {
    const found = lines.find(line)
    return found === MAIN_LINE ? MAIN_LINE : displayName(found)
  } catch {
    // A line gone since (discarded) is named by its id.
    return line
  }
}

/** How often a wait on a Run of another session or process reads the store. */
const POLL_MS = 100

/** The agents of one session. */
export function sessionAgents(parts: SessionAgentParts): SessionAgents {
  let runtime: Promise<AgentRuntime> | undefined
  let closed = false
  /** Hires between their check against `maxActive` and their admission. */
  let admitting = 0
  /** The Runs the session hired itself, with the line each was hired from. */
  const hired = new Map<string, { readonly handle: RunHandle; readonly line: string }>()
  const runtimeOf = (): Promise<AgentRuntime> => {
    // The agent layer's modules load at the first hire: a session that hires nothing (most
    // command-line calls) does not pay for them.
    runtime ??= Promise.all([parts.leases(), import('../agent/agent-runtime.ts')]).then(
      ([leases, { AgentRuntime }]) =>
        new AgentRuntime({
          store: parts.store,
          lines: parts.lines,
          line: parts.line,
          principal: parts.principal,
          ceiling: parts.ceiling,
          // Children count too: a Run's own hires cannot fan out past the session's limit.
          maxActive: parts.maxActive,
          ...(parts.budgetDollars === undefined
            ? {}
            : { budget: new BudgetLedger(parts.budgetDollars) }),
          maxDepth: parts.maxDepth,
          approveMerge: parts.approveMerge,
          actor: parts.actor,
          leases,
          programs: parts.programs,
          runTools: parts.runTools,
        }),
    )
    return runtime
  }
  /** A handle of the session, used from the line it was hired on. */
  const handleOf = (id: string): RunHandle => {
    const entry = hired.get(id)
    if (entry === undefined) {
      throw new EitriError(
        'permission_denied',
        `Run ${id} was not hired by this session, so it cannot take its result; run_await (or waiting for it) reads any Run.`,
        { data: { field: 'id' } },
      )
    }
    const line = parts.line()
    if (entry.line !== line) {
      const hiredOn = lineName(parts.lines, entry.line)
      throw new EitriError(
        'permission_denied',
        `Run ${id} was hired from the line ${hiredOn}, and this session now works on ${lineName(parts.lines, line)}; switch back to ${hiredOn} (workspace_use) to use it.`,
        { data: { field: 'id' } },
      )
    }
    return entry.handle
  }
  /** The runtime that admitted `id`, for cancelling or settling it; refused for another's Run. */
  const ownerOf = async (id: string, what: string): Promise<AgentRuntime> => {
    if (hired.has(id)) handleOf(id)
    const own = runtime === undefined ? undefined : await runtime
    if (own?.hired(id) === true) return own
    const found = await parts.store.getRun(id)
    // Another session's Run, to a session fenced to its own, reads like one that does not exist.
    const hidden =
      found !== undefined &&
      parts.hiredBy !== undefined &&
      !(await hiredWithin(parts.store, found, parts.hiredBy))
    const row = hidden ? undefined : found
    throw new EitriError(
      row === undefined ? 'not_found' : 'permission_denied',
      row === undefined
        ? `No Run ${id} in the store; run_list shows the Runs there are.`
        : `Run ${id} was hired by another session or process: a session may ${what} only the Runs it hired and their children. A person can, with \`eitri runs ${what === 'cancel' ? 'cancel' : 'merge|discard'} ${id}\`.`,
      { data: { field: 'id' } },
    )
  }
  return {
    async hire(call: HireCall, options = {}) {
      if (closed) throw new EitriError('not_available', 'This session is closed; hire nothing.')
      options.signal?.throwIfAborted()
      const roster =
        call.roster === undefined
          ? parts.roster
          : Roster.fromJSON(call.roster.content, call.roster.source)
      const own = await runtimeOf()
      // Counted and reserved in one step, before the first wait: hires sent at once each see
      // the others' reservations, not only the Runs admitted so far.
      const running = own.activeRuns + admitting
      if (running >= parts.maxActive) {
        throw new EitriError(
          'limit_exceeded',
          `Hire refused, nothing was admitted: this session already has ${running} Runs running or starting, its most (runs.maxActive in the configuration); await or cancel some first.`,
        )
      }
      admitting += 1
      let handle: RunHandle
      try {
        handle = await own.hire(roster, call.agent, {
          task: call.task,
          ...(call.settlement === undefined ? {} : { settlement: call.settlement as never }),
          ...(call.limits === undefined ? {} : { limits: call.limits as never }),
        })
      } finally {
        // Admitted by now (counted in activeRuns), or refused.
        admitting -= 1
      }
      hired.set(handle.id, { handle, line: parts.line() })
      return handle.id
    },
    result: (id, options = {}) => {
      const handle = handleOf(id)
      return options.owned === true ? handle.ownedResult(options) : handle.result(options)
    },
    async wait(id, options) {
      const outcome = await waitForRun(parts.store, id, options, parts.hiredBy)
      // The store shows a settled row once it is committed, a moment before the runtime hears
      // of its sync and lets the Run go: a hire right after the wait must not count it still.
      const own = hired.get(id)
      if (outcome.settled && own !== undefined)
        await own.handle.result({ signal: options.signal }).catch(() => undefined)
      const held = runtime === undefined ? undefined : await runtime
      return { ...outcome, yours: held?.hired(id) === true }
    },
    join: (ids, options = {}) => join(ids.map(handleOf), options),
    race: (ids, options = {}) => race(ids.map(handleOf), options),
    async cancel(id) {
      return (await ownerOf(id, 'cancel')).cancel(id)
    },
    async settle(id, action, options = {}) {
      return (await ownerOf(id, 'settle')).settle(id, action, options)
    },
    runsHiredFrom: (line) =>
      [...hired].filter(([, entry]) => entry.line === line).map(([id]) => id),
    async cancelRunsOf(line) {
      if (runtime === undefined) return
      const held = await runtime
      const ids = [...hired].filter(([, entry]) => entry.line === line).map(([id]) => id)
      await Promise.all(ids.map((id) => held.cancel(id)))
    },
    async close() {
      closed = true
      if (runtime !== undefined) await (await runtime).close()
    },
  }
}

/** Waits at most `waitMs` for a Run to stop and settle, reading the store. */
async function waitForRun(
  store: Store,
  id: string,
  options: RunWaitOptions,
  hiredBy: string | undefined,
): Promise<Omit<RunWaitOutcome, 'yours'>> {
  const started = Date.now()
  let told = 0
  let swept = -Infinity
  for (;;) {
    if (options.signal?.aborted === true) {
      throw new EitriError('cancelled', `The wait for Run ${id} was cancelled; the Run goes on.`)
    }
    // A Run whose owner died reads as interrupted, not running, once its lease has lapsed.
    if (Date.now() - swept >= 1000) {
      swept = Date.now()
      await store.sweepInterruptedRuns(options)
    }
    const found = await store.getRun(id, options)
    // Another session's Run reads like one that does not exist.
    const run =
      found !== undefined && hiredBy !== undefined && !(await hiredWithin(store, found, hiredBy))
        ? undefined
        : found
    if (run === undefined) {
      throw new EitriError(
        'not_found',
        `No Run ${id} in the store; run_list shows the Runs there are.`,
        {
          data: { field: 'id' },
        },
      )
    }
    const waited = Date.now() - started
    if (settledRow(run) || waited >= options.waitMs) return { run, settled: settledRow(run) }
    if (waited - told >= 1000) {
      told = waited
      options.onWaiting?.(waited)
    }
    await pause(Math.min(POLL_MS, options.waitMs - waited), options.signal)
  }
}

/**
 * Whether a row is of a Run that stopped and settled, or that will not settle by itself: one
 * swept as interrupted or with an unknown outcome (its process died) is kept for a person's
 * review (a row swept by an older eitri stays open).
 */
function settledRow(run: RunRecord): boolean {
  if (run.status === 'running') return false
  return run.settlementStatus !== 'open' || SWEPT_REASONS.includes(run.reason ?? '')
}
