/**
 * @module agent/agent-runtime
 * Hires agents and runs them: each hire is a durable Run working in its own fork of its
 * parent's world, owned by the Run, with no more authority than its parent. One runtime holds
 * the Runs it admitted; `close()` stops them all. Admission is durability-first, in this order:
 * the Run's row (`running`, with its provenance), the cancel hook, the trigger in its journal,
 * its world; only then does its program start. Everything a hire can be refused for is checked
 * before the row is written.
 */
import { randomUUID } from 'node:crypto'
import { EitriError } from '../errors/eitri-error.ts'
import type { Principal } from '../workspace/workspace-lines.ts'
import { runWorldName } from '../workspace/fork-owner.ts'
import type { AgentRuntimeOptions } from './agent-runtime-options.ts'
import { childAuthority, DEFAULT_MAX_RUN_DEPTH } from './delegation-ceiling.ts'
import { DETERMINISTIC_PROGRAMS } from './deterministic-programs.ts'
import { checkHireOptions, type HireOptions } from './hire-request.ts'
import { LiveRun } from './live-run.ts'
import type { ProgramFactory } from './program.ts'
import { Roster, type AgentRef } from './roster.ts'
import { admitRun } from './run-admission.ts'
import { runPrincipal } from '../workspace/fork-owner.ts'
import { cancelRun, followLeases } from './run-cancel.ts'
import { makeRunHandle, type RunHandle, type RunObservation } from './run-handle.ts'
import { settleReviewedRun, type ReviewOutcome } from './run-review.ts'
import type { RunWork } from './run-work.ts'
import { RunWatchers } from './run-watchers.ts'
import type { RunLifecycleListener } from '../ports/run-lifecycle.ts'

/** The Runs of one caller. */
export class AgentRuntime implements AsyncDisposable {
  readonly #options: AgentRuntimeOptions
  readonly #programs: Readonly<Record<string, ProgramFactory>>
  readonly #work: RunWork
  readonly #admissions = new Set<Promise<unknown>>()
  /** Runs between their check against `maxActive` and their admission (then in `live`). */
  readonly #starting = new Set<string>()
  #closed = false
  /** Aborts at close: a settlement waiting for a person stops waiting (the Run goes to review). */
  readonly #closeController = new AbortController()
  #closing: Promise<void> | undefined
  readonly #unlisten: (() => void) | undefined

  constructor(options: AgentRuntimeOptions) {
    this.#options = options
    this.#programs = options.programs ?? DETERMINISTIC_PROGRAMS
    this.#work = {
      options,
      live: new Map(),
      hired: new Set(),
      closed: () => this.#closed,
      closeSignal: this.#closeController.signal,
      watchers: new RunWatchers(),
      hire: (roster, ref, hireOptions, ambient) => this.#hire(roster, ref, hireOptions, ambient),
    }
    this.#unlisten = followLeases(this.#work)
  }

  /** How many Runs this runtime holds that have not settled yet. */
  get activeRuns(): number {
    return this.#work.live.size
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
   * Watches this runtime's Runs: `listener` is told at once a `runs/snapshot` of the active
   * Runs, then `run/started`, `run/cancel-requested` and `run/finished` (only once the terminal
   * row is durable) as they happen, until the returned function is called.
   *
   * @example
   * const unwatch = runtime.watchRuns((event) => log.push(event.type))
   */
  watchRuns(listener: RunLifecycleListener): () => void {
    return this.#work.watchers.watch(listener)
  }

  /** Whether this runtime admitted the Run `runId` (running or not): one it may cancel or settle. */
  hired(runId: string): boolean {
    return this.#work.hired.has(runId)
  }

  /**
   * Cancels a Run of this runtime (its children first) and waits for it to stop and settle.
   * False for a Run this runtime does not hold (another's, or one that has ended).
   */
  async cancel(runId: string): Promise<boolean> {
    const live = this.#work.live.get(runId)
    if (live === undefined) return false
    await cancelRun(this.#work, live)
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
  ): Promise<ReviewOutcome> {
    if (!this.#work.hired.has(runId)) {
      throw new EitriError('not_found', `No Run ${runId} among the Runs this runtime hired.`)
    }
    return settleReviewedRun({
      store: this.#options.store,
      lines: this.#options.lines,
      runId,
      action,
      approve: this.#options.approveMerge,
      signal: options.signal ?? this.#closeController.signal,
      onStoreRetry: this.#options.onStoreRetry,
    })
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
      const { live } = this.#work
      while (live.size > 0) {
        const roots = [...live.values()].filter(
          (run) => run.parent === undefined || !live.has(run.parent.id),
        )
        await Promise.all(roots.map((run) => cancelRun(this.#work, run)))
      }
      this.#unlisten?.()
    })()
    return this.#closing
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close()
  }

  /** Checks everything a hire can be refused for, then admits the Run. */
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
    const own = this.#options.ceiling
    const ceiling = childAuthority({
      parent: parent?.authority ?? (typeof own === 'function' ? own() : own),
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
    // A child's budget comes out of its parent's ledger, held with the parent for as long as it
    // lives (never looked up elsewhere, so no child is ever left without one), a root's out of
    // the runtime's (the session's).
    const budget = parent === undefined ? this.#options.budget : parent.budget
    const program = factory(def, {
      request,
      parentRun: parent?.id,
      ...(budget === undefined ? {} : { budget }),
    })
    this.#refuseClosed()
    const id = randomUUID()
    // Checked and reserved with no wait in between, so hires made at once (a program's loop of
    // hires, several sessions' calls) each see the others.
    this.#refuseFull()
    const live = new LiveRun({
      id,
      def,
      world: runWorldName(id),
      parent,
      authority: ceiling.authority,
      request,
      budget: program.budget ?? budget,
    })
    this.#starting.add(id)
    const admission = admitRun(this.#work, live, roster, program, { from, by })
    this.#admissions.add(admission)
    try {
      await admission
    } finally {
      this.#admissions.delete(admission)
      this.#starting.delete(id)
    }
    return this.#handle(live, ambient)
  }

  /** The structural parent: the ambient Run inside a Run, else a live Run named by id. */
  #parentOf(named: string | undefined, ambient: LiveRun | undefined): LiveRun | undefined {
    if (ambient !== undefined && named !== undefined && named !== ambient.id) {
      throw new EitriError(
        'permission_denied',
        `Hire refused: a child's parent must be the current Run (${ambient.id}), not ${named}; leave parentRun out.`,
      )
    }
    const parent = ambient ?? (named === undefined ? undefined : this.#work.live.get(named))
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
      stop: () => cancelRun(this.#work, live),
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

  /** Refuses a hire past `maxActive`: Runs held, and those starting that are not held yet. */
  #refuseFull(): void {
    const limit = this.#options.maxActive
    if (limit === undefined) return
    const { live } = this.#work
    let held = live.size
    for (const id of this.#starting) if (!live.has(id)) held += 1
    if (held >= limit) {
      throw new EitriError(
        'limit_exceeded',
        `Hire refused, nothing was admitted: ${held} Runs (children included) are running or starting here, the most allowed at once (${limit}, runs.maxActive in the configuration); await or cancel some first, or do the work without hiring.`,
        { data: { field: 'maxActive' } },
      )
    }
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
