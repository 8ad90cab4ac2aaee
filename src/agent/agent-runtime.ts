/**
 * @module agent/agent-runtime
 * Hires agents and runs them: each hire is a durable Run working in its own fork of its
 * parent's world, owned by the Run, with no more authority than its parent. One runtime holds
 * the Runs it admitted; `close()` stops them all. Admission is durability-first, in this order:
 * the Run's row (`running`, with its provenance), the cancel hook, the trigger in its journal,
 * its world; only then does its program start. Everything a hire can be refused for is checked
 * before the row is written.
 */
import { createHash, randomUUID } from 'node:crypto'
import { EitriError } from '../errors/eitri-error.ts'
import { MAIN_LINE } from '../ports/line-control.ts'
import type { RunAdmission, RunFinish, RunRecord } from '../store/run-record.ts'
import type { Store } from '../store/store.ts'
import type { Principal, WorkspaceLines } from '../workspace/workspace-lines.ts'
import { canonicalJson } from './canonical-json.ts'
import { agentDefHash } from './agent-def.ts'
import { childAuthority, DEFAULT_MAX_RUN_DEPTH, type Authority } from './delegation-ceiling.ts'
import { DETERMINISTIC_PROGRAMS, outputText } from './deterministic-programs.ts'
import { durableWrite } from './durable-write.ts'
import { checkHireOptions, type HireOptions } from './hire-request.ts'
import { LiveRun } from './live-run.ts'
import type { Program, ProgramFactory } from './program.ts'
import { Roster, type AgentRef } from './roster.ts'
import { makeRunHandle, type RunHandle, type RunObservation } from './run-handle.ts'
import type { RunLeases } from './run-lease.ts'
import { resultOfRecord, type RunResult } from './run-result.ts'
import { discardWorld, settleWorld, type MergeApprover } from './run-settlement.ts'

/** The version of the program interpreter recorded with each Run. */
export const INTERPRETER_VERSION = 1

/** What a runtime is opened with. */
export interface AgentRuntimeOptions {
  readonly store: Store
  readonly lines: WorkspaceLines
  /** The caller's line: a root Run's world is forked from it. */
  readonly line: string | (() => string)
  /** Who hires: a root Run's world is forked by it (and owned by the Run). */
  readonly principal: Principal
  /** Asks a person before a Run's world is merged into main; without it, such Runs go to review. */
  readonly approveMerge?: MergeApprover | undefined
  /** The caller's own authority, the ceiling of root Runs; undefined: only each definition's. */
  readonly ceiling?: Authority | undefined
  /** @default 4 */
  readonly maxDepth?: number | undefined
  /** The program of each kind. @default echo and scripted */
  readonly programs?: Readonly<Record<string, ProgramFactory>> | undefined
  /** Who the Runs act for, as their rows record it. */
  readonly actor?: string | undefined
  /**
   * This process's keeper of Run leases: each Run is admitted holding a lease, released once its
   * terminal row is written; a cancel request another process leaves in the store cancels the
   * Run here, and a Run whose lease was lost stops. Without it, Runs hold no lease (a sweep
   * ends them as interrupted once they have not changed for a while).
   */
  readonly leases?: RunLeases | undefined
  /** Told when a terminal store write fails and is being retried (the Run waits meanwhile). */
  readonly onStoreRetry?: ((message: string, error: unknown) => void) | undefined
  /** Called once a Run's row is durable and its cancel hook registered (a lease starts here). */
  readonly onAdmitted?: ((runId: string) => void) | undefined
  /** Called once a Run has stopped and settled, or failed to (a lease ends here). */
  readonly onEnded?: ((runId: string) => void) | undefined
}

/** The Runs of one caller. */
export class AgentRuntime implements AsyncDisposable {
  readonly #options: AgentRuntimeOptions
  readonly #programs: Readonly<Record<string, ProgramFactory>>
  readonly #live = new Map<string, LiveRun>()
  /** Every Run this runtime admitted: the ones it may settle later. */
  readonly #hired = new Set<string>()
  readonly #admissions = new Set<Promise<unknown>>()
  #closed = false
  /** Aborts at close: a settlement waiting for a person stops waiting (the Run goes to review). */
  readonly #closeController = new AbortController()
  #closing: Promise<void> | undefined
  readonly #unlisten: (() => void) | undefined

  constructor(options: AgentRuntimeOptions) {
    this.#options = options
    this.#programs = options.programs ?? DETERMINISTIC_PROGRAMS
    this.#unlisten = options.leases?.listen({
      onCancelRequested: (runId) => this.#cancelRequested(runId),
      onLost: (runId) => this.#lost(runId),
    })
  }

  /** How many Runs this runtime holds that have not settled yet. */
  get activeRuns(): number {
    return this.#live.size
  }

  /**
   * Hires the agent `ref` of `roster`: admits a Run and starts it. When it returns, the Run can
   * be observed and cancelled.
   *
   * @throws EitriError before anything is written: `conflict` when the runtime is closed or a
   *   ref is stale; `not_found` for an unknown agent or parent; `invalid_input` for bad options;
   *   `permission_denied` past the delegation ceiling. After the row is written, a failure marks
   *   the Run failed and is thrown with the Run's id in `data.runId`.
   */
  hire(roster: Roster, ref: string | AgentRef, options: HireOptions): Promise<RunHandle> {
    return this.#hire(roster, ref, options, undefined)
  }

  /**
   * Cancels a Run of this runtime (its children first) and waits for it to stop and settle.
   * False for a Run this runtime does not hold (another's, or one that has ended).
   */
  async cancel(runId: string): Promise<boolean> {
    const live = this.#live.get(runId)
    if (live === undefined) return false
    await this.#cancel(live)
    return true
  }

  /** A Run as the store holds it, with the causes recorded since and its children. */
  async observe(
    runId: string,
    options: { readonly signal?: AbortSignal | undefined } = {},
  ): Promise<RunObservation> {
    const { store } = this.#options
    const call = options.signal === undefined ? {} : { signal: options.signal }
    const record = await store.getRun(runId, call)
    if (record === undefined) throw new EitriError('not_found', `No Run ${runId} in the store.`)
    const events = await store.listRunEvents(runId, {}, call)
    const causes = events
      .filter((event) => event.type === 'caused-by')
      .map((event) => (event.data as { runId?: unknown } | null)?.runId)
      .filter((id): id is string => typeof id === 'string')
    const children = await store.listRuns({ parentId: runId, limit: 1000 }, call)
    return {
      ...record,
      causedBy: [...new Set([...record.causedBy, ...causes])],
      children: children.map((child) => child.id),
    }
  }

  /**
   * Settles a Run kept for review: `merge` brings its world into its parent's line (into main
   * only with a person's approval), `discard` throws it away. A Run settles once: one already
   * merged or discarded, or still running, is refused.
   *
   * @throws EitriError `not_found` for a Run this runtime did not hire; `conflict` when it is
   *   not in review.
   */
  async settle(
    runId: string,
    action: 'merge' | 'discard',
    options: { readonly signal?: AbortSignal | undefined } = {},
  ): Promise<{ readonly settled: boolean; readonly reason: string }> {
    const { store, lines } = this.#options
    const record = this.#hired.has(runId) ? await store.getRun(runId) : undefined
    if (record === undefined) {
      throw new EitriError('not_found', `No Run ${runId} among the Runs this runtime hired.`)
    }
    if (record.settlementStatus !== 'review' || record.world === undefined) {
      throw new EitriError(
        'conflict',
        record.settlementStatus === 'open'
          ? `Run ${runId} has not settled yet; it settles itself once it stops.`
          : `Run ${runId} is settled as ${record.settlementStatus} already; a Run settles once.`,
      )
    }
    const world = lines.find(record.world)
    if (world === MAIN_LINE)
      throw new EitriError('state_corrupt', `Run ${runId} names main as its world.`)
    if (action === 'discard') {
      await discardWorld(lines, world.id)
      await this.#durable((call) =>
        store.settleRun(runId, { status: 'discarded', reason: 'discarded-after-review' }, call),
      )
      return { settled: true, reason: 'discarded-after-review' }
    }
    const step = await settleWorld({
      lines,
      runId,
      agentId: record.agentId ?? '',
      world: world.id,
      status: 'completed',
      policy: 'automatic',
      approve: this.#options.approveMerge,
      signal: options.signal ?? this.#closeController.signal,
    })
    if (step.status !== 'merged') return { settled: false, reason: step.reason }
    await this.#durable((call) =>
      store.settleRun(runId, { status: 'merged', reason: 'merged-after-review' }, call),
    )
    return { settled: true, reason: 'merged-after-review' }
  }

  /**
   * Refuses new hires, cancels every Run (children first) and waits for them to stop and settle.
   * Idempotent.
   */
  close(): Promise<void> {
    this.#closing ??= (async () => {
      this.#closed = true
      this.#closeController.abort(new EitriError('cancelled', 'The agent runtime closed.'))
      await Promise.allSettled([...this.#admissions])
      while (this.#live.size > 0) {
        const roots = [...this.#live.values()].filter(
          (live) => live.parent === undefined || !this.#live.has(live.parent.id),
        )
        await Promise.all(roots.map((live) => this.#cancel(live)))
      }
      this.#unlisten?.()
    })()
    return this.#closing
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close()
  }

  async #hire(
    roster: Roster,
    ref: string | AgentRef,
    options: HireOptions,
    ambient: LiveRun | undefined,
  ): Promise<RunHandle> {
    this.#refuseClosed()
    if (!(roster instanceof Roster)) {
      throw new EitriError('invalid_input', 'Hire refused: roster must be a Roster value.')
    }
    const def = roster.lookup(ref)
    if (def.status !== 'available') {
      throw new EitriError(
        'invalid_input',
        `Hire refused: agent "${def.id}" is ${def.status}; hire an available agent.`,
      )
    }
    const request = checkHireOptions(options)
    const parent = this.#parentOf(request.parentRun, ambient)
    const factory = this.#programs[def.program.kind]
    if (factory === undefined) {
      throw new EitriError(
        'not_available',
        `Hire refused: this runtime runs no ${def.program.kind} programs (it runs ${Object.keys(this.#programs).join(', ')}).`,
      )
    }
    const ceiling = childAuthority({
      parent: parent?.authority ?? this.#options.ceiling,
      def,
      maxDepth: this.#options.maxDepth ?? DEFAULT_MAX_RUN_DEPTH,
    })
    if (ceiling.type === 'refused') {
      throw new EitriError(
        'permission_denied',
        `Hire refused, no Run admitted: ${ceiling.reason}.`,
        {
          data: { field: ceiling.field },
        },
      )
    }
    // The line a root world forks from must be one the caller may act on; looked up now, so a
    // line it may not reach refuses the hire before anything is written.
    const from = parent?.worldId ?? this.#lineOf(this.#options.line)
    const by: Principal = parent === undefined ? this.#options.principal : runPrincipal(parent.id)
    this.#options.lines.find(from, by)
    const program = factory(def)
    this.#refuseClosed()
    const id = randomUUID()
    const live = new LiveRun({
      id,
      def,
      world: `run-${id}`,
      parent,
      authority: ceiling.authority,
      request,
    })
    const admission = this.#admit(live, roster, program, { from, by })
    this.#admissions.add(admission)
    try {
      await admission
    } finally {
      this.#admissions.delete(admission)
    }
    return this.#handle(live, ambient)
  }

  /** Admission, in order; a failure after the row is written marks the Run failed. */
  async #admit(
    live: LiveRun,
    roster: Roster,
    program: Program,
    fork: { readonly from: string; readonly by: Principal },
  ): Promise<void> {
    const { store, lines } = this.#options
    const { def, request } = live
    // A child belongs to its parent from the start: a parent whose program did not wait for the
    // hire still waits for the child before it settles.
    live.parent?.children.add(live)
    const admission: RunAdmission = {
      id: live.id,
      kind: 'agent-task',
      parentId: live.parent?.id,
      causedBy: live.causedBy,
      actor: this.#options.actor,
      trigger: { task: request.task },
      roster: rosterIdentity(roster),
      agentId: def.id,
      agentVersion: def.version,
      programKind: def.program.kind,
      interpreterVersion: INTERPRETER_VERSION,
      agentDefHash: agentDefHash(def),
      world: live.world,
      isolation: 'fork',
      settlementPolicy: request.settlement,
    }
    try {
      const { leases } = this.#options
      // With leases, the Run is held by this process from the instant its row exists.
      await (leases === undefined ? store.admitRun(admission) : leases.admit(admission))
    } catch (error) {
      // No row: nothing to end durably, but whoever waits on the Run must hear.
      live.parent?.children.delete(live)
      live.follow(Promise.reject(error instanceof Error ? error : new Error(String(error))))
      throw error
    }
    this.#live.set(live.id, live)
    this.#hired.add(live.id)
    this.#options.onAdmitted?.(live.id)
    let step = 'trigger-failed'
    try {
      await store.appendRunEvents(live.id, [{ type: 'trigger', data: { task: request.task } }])
      step = 'world-fork-failed'
      const world = await lines.fork({
        from: fork.from,
        name: live.world,
        by: fork.by,
        owner: live.id,
      })
      live.worldId = world.id
    } catch (error) {
      // Followed like any end, so a cancel or a close waiting on this Run is answered too.
      live.follow(
        this.#end(live, async () => {
          const record = await this.#finish(live, {
            status: 'failed',
            reason: step,
            error: messageOf(error),
          })
          return resultOfRecord(
            await this.#durable((call) =>
              store.settleRun(record.id, { status: 'discarded', reason: 'failed' }, call),
            ),
          ) as RunResult
        }),
      )
      await live.done.catch(() => undefined)
      throw new EitriError(
        'tool_failed',
        `Run ${live.id} was admitted but could not start (${step}: ${messageOf(error)}); it is recorded as failed.`,
        { cause: error, data: { runId: live.id } },
      )
    }
    if (this.#closed) {
      // Admitted before the close began, so it has a row and ends durably: but nothing starts
      // once the runtime is closing.
      live.cancelling = true
      live.controller.abort(new EitriError('cancelled', 'The agent runtime closed.'))
    }
    live.follow(this.#end(live, () => this.#execute(live, program)))
  }

  /** Runs `work` to the Run's settled result, then lets go of the Run whatever happened. */
  async #end(live: LiveRun, work: () => Promise<RunResult>): Promise<RunResult> {
    try {
      return await work()
    } finally {
      this.#live.delete(live.id)
      this.#options.onEnded?.(live.id)
    }
  }

  /** The program, then quiescence (every child stopped), the terminal row, the settlement. */
  async #execute(live: LiveRun, program: Program): Promise<RunResult> {
    const { store, lines } = this.#options
    const finish = await this.#runProgram(live, program)
    live.programEnded = true
    // A Run that did not complete takes its children down with it; one that did waits for them,
    // so their merges land in its world before its own settlement looks at it.
    if (finish.status === 'failed' || finish.status === 'cancelled') {
      await Promise.all([...live.children].map((child) => this.#cancel(child)))
    }
    const childResults = await Promise.allSettled([...live.children].map((child) => child.done))
    const record = await this.#finish(live, finish)
    // Swept meanwhile, the row says failed/interrupted: that is how the Run ended.
    const status = record.status === 'running' ? finish.status : record.status
    let settlement: { status: 'merged' | 'review' | 'discarded'; reason: string }
    try {
      settlement = await settleWorld({
        lines,
        runId: live.id,
        agentId: live.def.id,
        world: live.worldId as string,
        status,
        policy: live.request.settlement,
        approve: this.#options.approveMerge,
        signal: this.#closeController.signal,
      })
    } catch (error) {
      settlement = { status: 'review', reason: `settlement-failed: ${messageOf(error)}` }
    }
    const settled = await this.#durable((call) => store.settleRun(live.id, settlement, call))
    if (settlement.status === 'discarded') {
      // The worlds of children kept for review went with this one.
      for (const child of childResults) {
        if (child.status === 'fulfilled' && child.value.settlementStatus === 'review') {
          await this.#durable((call) =>
            store.settleRun(
              child.value.id,
              { status: 'discarded', reason: 'parent-discarded' },
              call,
            ),
          )
        }
      }
    }
    return resultOfRecord(settled) as RunResult
  }

  /**
   * Writes the Run's terminal row, retrying while the store is unavailable (until then the Run
   * stays `running` and its handle unresolved), then journals `finished` and lets go of its
   * lease. A `conflict` from a Run the sweep ended (its lease lapsed or was lost) answers that
   * row: failed, `interrupted`, with `finished` already journaled by the sweep.
   */
  async #finish(live: LiveRun, finish: RunFinish): Promise<RunRecord> {
    const { store, leases } = this.#options
    try {
      let record: RunRecord
      try {
        record = await this.#durable((call) => store.finishRun(live.id, finish, call))
      } catch (error) {
        if (!EitriError.isInstance(error) || error.code !== 'conflict') throw error
        const row = await this.#durable((call) => store.getRun(live.id, call))
        if (row === undefined || row.status === 'running' || row.status === 'waiting') throw error
        return row
      }
      const reason = finish.status === 'completed' ? undefined : finish.reason
      await this.#durable((call) =>
        store.appendRunEvents(
          live.id,
          [{ type: 'finished', data: { status: finish.status, ...(reason && { reason }) } }],
          call,
        ),
      )
      return record
    } finally {
      leases?.release(live.id)
    }
  }

  /** A terminal store write: retried while the store is unavailable, until it lands. */
  #durable<T>(write: (call: { readonly signal?: AbortSignal }) => Promise<T>): Promise<T> {
    return durableWrite(write, { log: this.#options.onStoreRetry })
  }

  /** Another process asked, through the store, to cancel a Run: journaled there already. */
  #cancelRequested(runId: string): void {
    const live = this.#live.get(runId)
    if (live !== undefined) void this.#cancel(live, { journal: false })
  }

  /**
   * This process no longer holds a Run's lease (it was swept while the process could not
   * renew): its work cannot land, so the program stops; its `finishRun` then answers the row
   * the sweep wrote.
   */
  #lost(runId: string): void {
    const live = this.#live.get(runId)
    if (live === undefined || live.programEnded) return
    void this.#cancel(live, { journal: false })
  }

  /** What the program's end is, as the Run's row will say. */
  async #runProgram(live: LiveRun, program: Program): Promise<RunFinish> {
    const signal = live.controller.signal
    if (signal.aborted) return { status: 'cancelled', reason: 'cancelled before it started' }
    try {
      // Journaled before the program runs, so the journal never shows work it did not start.
      await durableWrite(
        (call) => this.#options.store.appendRunEvents(live.id, [{ type: 'started' }], call),
        { signal, log: this.#options.onStoreRetry },
      )
    } catch (error) {
      if (signal.aborted) return { status: 'cancelled', reason: 'cancelled before it started' }
      return { status: 'failed', reason: 'start-not-journaled', error: messageOf(error) }
    }
    try {
      const outcome = await program.run({
        runId: live.id,
        agent: live.def,
        authority: live.authority,
        task: live.request.task,
        signal,
        world: live.world,
        tree: () => this.#options.lines.tree(live.worldId as string),
        hire: (roster, ref, options) => this.#hire(roster, ref, options, live),
      })
      // Cancelling stops its children first; a program that ends while they stop (having
      // seen a child's cancelled result) ends cancelled all the same.
      if (live.cancelling) return { status: 'cancelled' }
      switch (outcome.status) {
        case 'completed':
          return {
            status: 'completed',
            value: outcome.value,
            output: outcome.output ?? outputText(outcome.value),
          }
        case 'failed':
          return { status: 'failed', reason: 'program-failed', error: outcome.error }
        case 'waiting':
          return { status: 'waiting', reason: outcome.reason }
      }
    } catch (error) {
      if (signal.aborted) return { status: 'cancelled' }
      return { status: 'failed', reason: 'program-threw', error: messageOf(error) }
    }
  }

  /** Cancels a Run, its children first, and waits for it to stop and settle. */
  async #cancel(live: LiveRun, options: { readonly journal?: boolean } = {}): Promise<void> {
    if (!live.cancelling) {
      live.cancelling = true
      if (options.journal !== false) {
        await this.#options.store
          .appendRunEvents(live.id, [{ type: 'cancel-requested' }])
          .catch(() => undefined)
      }
      await Promise.all([...live.children].map((child) => this.#cancel(child)))
      live.controller.abort(new EitriError('cancelled', `Run ${live.id} was cancelled.`))
    }
    await live.done.catch(() => undefined)
  }

  /** The structural parent: the ambient Run inside a Run, else a live Run named by id. */
  #parentOf(named: string | undefined, ambient: LiveRun | undefined): LiveRun | undefined {
    if (ambient !== undefined && named !== undefined && named !== ambient.id) {
      throw new EitriError(
        'permission_denied',
        `Hire refused: a child's parent must be the current Run (${ambient.id}), not ${named}; leave parentRun out.`,
      )
    }
    const parent = ambient ?? (named === undefined ? undefined : this.#live.get(named))
    if (named !== undefined && parent === undefined) {
      throw new EitriError(
        'not_found',
        `Hire refused: no live Run ${named} in this runtime; a parent must be a Run it hired that is still running.`,
      )
    }
    if (parent !== undefined && !parent.hiring) {
      throw new EitriError(
        'conflict',
        `Hire refused: Run ${parent.id} is ${parent.cancelling ? 'being cancelled' : 'finishing'} and hires no more children.`,
      )
    }
    return parent
  }

  #handle(live: LiveRun, consumer: LiveRun | undefined): RunHandle {
    return makeRunHandle({
      id: live.id,
      done: live.done,
      stop: () => this.#cancel(live),
      cancel: () => this.cancel(live.id),
      observe: (options) => this.observe(live.id, options),
      consumed: async () => {
        if (consumer === undefined || consumer.causedBy.includes(live.id)) return
        consumer.causedBy.push(live.id)
        // The store keeps causedBy as admitted; later causes go to the consumer's journal.
        await this.#options.store.appendRunEvents(consumer.id, [
          { type: 'caused-by', data: { runId: live.id } },
        ])
      },
    })
  }

  #refuseClosed(): void {
    if (this.#closed) {
      throw new EitriError(
        'conflict',
        'Run admission is closed: this runtime is closing or closed, so nothing was admitted.',
      )
    }
  }

  #lineOf(line: string | (() => string)): string {
    return typeof line === 'function' ? line() : line
  }
}

/** A Run acting as the forker of its children's worlds: it sees its own world and below. */
function runPrincipal(runId: string): Principal {
  return { id: runId, seesEveryFork: false }
}

/** What a Run's row records as its roster: the hash of the roster's canonical content. */
function rosterIdentity(roster: Roster): string {
  return `sha256:${createHash('sha256').update(canonicalJson(roster.toJSON())).digest('hex')}`
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error)
}
