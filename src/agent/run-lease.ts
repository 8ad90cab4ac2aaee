/**
 * @module agent/run-lease
 * One process's hold on its Runs. The keeper gives the process an owner id, renews the leases
 * of every Run it holds (the heartbeat), passes on cancel requests other processes leave in
 * the store for its Runs, and sweeps: ends as `failed`/`interrupted` the Runs of any owner
 * that stopped renewing (killed, crashed, powered off). Its timers never keep the process
 * alive, and closing it ends its own leases only.
 */
import { randomBytes } from 'node:crypto'
import os from 'node:os'
import { EitriError } from '../errors/eitri-error.ts'
import type {
  RunAdmission,
  RunCancelRequest,
  RunLeaseTerms,
  RunRecord,
} from '../store/run-record.ts'
import type { Store, StoreCallOptions } from '../store/store.ts'

/** Which of the keeper's periodic jobs failed. */
export type RunLeaseJob = 'heartbeat' | 'cancel-poll' | 'sweep' | 'release'

/** Options of {@link RunLeases.start}. */
export interface RunLeasesOptions {
  /** @default the host name, the process id and random hex: unique per process */
  readonly owner?: string
  /** How often the leases are renewed, in ms. @default 5000 */
  readonly heartbeatMs?: number
  /** How long a lease lasts unrenewed, in ms; more than `heartbeatMs`. @default 15000 */
  readonly ttlMs?: number
  /**
   * How often the store is asked for cancel requests, in ms: an owner obeys a request from
   * another process within about this long. @default 500
   */
  readonly cancelPollMs?: number
  /** How often interrupted Runs are swept, in ms; one sweep runs at start. @default 30000 */
  readonly sweepMs?: number
  /** Called once per Run when another process asked to cancel it. */
  readonly onCancelRequested?: (runId: string, request: RunCancelRequest) => void
  /**
   * Called when a Run this keeper tracks is no longer held by it: swept as interrupted while
   * this process could not renew (a long pause, a lost connection), or finished without
   * {@link RunLeases.release}. The process should stop working on it.
   */
  readonly onLost?: (runId: string) => void
  /** Called with the Runs each sweep ended. */
  readonly onSwept?: (runs: readonly RunRecord[]) => void
  /** Called when a periodic job fails; the job runs again at its next tick. */
  readonly onError?: (error: unknown, job: RunLeaseJob) => void
}

/** What a holder of Runs (an agent runtime) hears from the keeper; see {@link RunLeases.listen}. */
export interface RunLeaseListener {
  readonly onCancelRequested?: ((runId: string, request: RunCancelRequest) => void) | undefined
  readonly onLost?: ((runId: string) => void) | undefined
}

const DEFAULTS = { heartbeatMs: 5_000, ttlMs: 15_000, cancelPollMs: 500, sweepMs: 30_000 }

/** A new owner id: readable in a Run row, unique per process. */
export function newLeaseOwner(): string {
  return `${os.hostname()}:${process.pid}:${randomBytes(6).toString('hex')}`
}

/**
 * The keeper of one process's Run leases.
 *
 * @example
 * const leases = await RunLeases.start(store, { onCancelRequested: (id) => cancelLocally(id) })
 * await leases.admit({ id: 'run-1', trigger: { task } })
 * // … the Run works; finishRun(…) ends its lease …
 * leases.release('run-1')
 * await leases.close()
 */
export class RunLeases {
  readonly owner: string
  /** The terms to admit or hold a Run with; `admit` and `hold` use them. */
  readonly terms: RunLeaseTerms
  readonly #store: Store
  readonly #options: RunLeasesOptions
  readonly #held = new Set<string>()
  readonly #listeners = new Set<RunLeaseListener>()
  /** Runs whose cancel request was passed on already: each is passed on once. */
  readonly #told = new Set<string>()
  readonly #timers = new Set<NodeJS.Timeout>()
  readonly #inFlight = new Set<Promise<unknown>>()
  #closed: Promise<void> | undefined

  private constructor(store: Store, options: RunLeasesOptions, settings: typeof DEFAULTS) {
    this.#store = store
    this.#options = options
    this.owner = options.owner ?? newLeaseOwner()
    this.terms = Object.freeze({ owner: this.owner, ttlMs: settings.ttlMs })
  }

  /**
   * Starts a keeper on `store`: sweeps once (so Runs left by a dead process end now), then
   * heartbeats, polls cancel requests and sweeps on their intervals.
   * @throws EitriError `invalid_input` naming a bad interval.
   */
  static async start(store: Store, options: RunLeasesOptions = {}): Promise<RunLeases> {
    const settings = checkSettings(options)
    const keeper = new RunLeases(store, options, settings)
    await keeper.#guard('sweep', () => keeper.sweep())
    keeper.#every(settings.heartbeatMs, 'heartbeat', () => keeper.heartbeat())
    keeper.#every(settings.cancelPollMs, 'cancel-poll', () => keeper.pollCancelRequests())
    keeper.#every(settings.sweepMs, 'sweep', () => keeper.sweep())
    return keeper
  }

  /**
   * Tells `listener` too of cancel requests and lost Runs, besides the options given at start:
   * so a runtime opened later can obey them. Answers the function that stops telling it.
   */
  listen(listener: RunLeaseListener): () => void {
    this.#listeners.add(listener)
    return () => {
      this.#listeners.delete(listener)
    }
  }

  /** The Runs this keeper holds. */
  held(): string[] {
    return [...this.#held].sort()
  }

  /** Admits a Run held by this process from its first instant (one transaction). */
  async admit(admission: RunAdmission, options?: StoreCallOptions): Promise<RunRecord> {
    this.#assertOpen()
    const record = await this.#store.admitRun({ ...admission, lease: this.terms }, options)
    this.#held.add(record.id)
    return record
  }

  /** Holds a Run admitted without a lease. @throws as `Store.holdRun`. */
  async hold(runId: string, options?: StoreCallOptions): Promise<RunRecord> {
    this.#assertOpen()
    const record = await this.#store.holdRun(runId, this.terms, options)
    this.#held.add(runId)
    return record
  }

  /**
   * Stops tracking a Run, once it is settled (which already ended its lease in the store). A
   * Run released while still running is swept as interrupted; one released ended but not
   * settled is kept for review by the next sweep.
   */
  release(runId: string): void {
    if (!this.#held.delete(runId)) return
    this.#told.delete(runId)
    this.#track(
      this.#guard('release', () => this.#store.releaseRunLeases(this.owner, [runId])),
    ).catch(() => undefined)
  }

  /** Renews every lease this process holds now, and reports the Runs it no longer holds. */
  async heartbeat(options?: StoreCallOptions): Promise<void> {
    const renewed = new Set(await this.#store.renewRunLeases(this.terms, options))
    for (const runId of [...this.#held]) {
      if (renewed.has(runId)) continue
      this.#held.delete(runId)
      this.#told.delete(runId)
      this.#options.onLost?.(runId)
      for (const listener of [...this.#listeners]) listener.onLost?.(runId)
    }
  }

  /** Passes on each new cancel request for this process's Runs. */
  async pollCancelRequests(options?: StoreCallOptions): Promise<void> {
    const requests = await this.#store.listCancelRequests(this.owner, options)
    for (const request of requests) {
      if (this.#told.has(request.runId)) continue
      this.#told.add(request.runId)
      this.#options.onCancelRequested?.(request.runId, request)
      for (const listener of [...this.#listeners])
        listener.onCancelRequested?.(request.runId, request)
    }
  }

  /** Ends every Run, of any owner, whose lease lapsed; answers them. */
  async sweep(options?: StoreCallOptions): Promise<RunRecord[]> {
    const swept = await this.#store.sweepInterruptedRuns(options)
    if (swept.length > 0) this.#options.onSwept?.(swept)
    return swept
  }

  /**
   * Stops the timers, waits for a job in flight, and ends this process's own leases (a Run
   * still running is then swept as interrupted by whoever sweeps next). Idempotent; never
   * touches another owner's Runs.
   */
  close(): Promise<void> {
    this.#closed ??= (async () => {
      for (const timer of this.#timers) clearTimeout(timer)
      this.#timers.clear()
      await Promise.allSettled([...this.#inFlight])
      await this.#guard('release', () => this.#store.releaseRunLeases(this.owner))
      this.#held.clear()
      this.#told.clear()
    })()
    return this.#closed
  }

  /** Runs `job` every `everyMs` after the previous run ended, so a slow store never stacks them. */
  #every(everyMs: number, name: RunLeaseJob, job: () => Promise<unknown>): void {
    const schedule = (): void => {
      if (this.#closed !== undefined) return
      const timer = setTimeout(() => {
        this.#timers.delete(timer)
        if (this.#closed !== undefined) return
        void this.#track(this.#guard(name, job)).then(schedule)
      }, everyMs)
      timer.unref()
      this.#timers.add(timer)
    }
    schedule()
  }

  /** Runs `job`, handing a failure to `onError`: a periodic job never throws into the loop. */
  async #guard(name: RunLeaseJob, job: () => Promise<unknown>): Promise<void> {
    try {
      await job()
    } catch (error) {
      try {
        this.#options.onError?.(error, name)
      } catch {
        // A failing error handler must not stop the heartbeat either.
      }
    }
  }

  #track<T>(work: Promise<T>): Promise<T> {
    this.#inFlight.add(work)
    void work.finally(() => this.#inFlight.delete(work))
    return work
  }

  #assertOpen(): void {
    if (this.#closed !== undefined) {
      throw new EitriError(
        'not_available',
        `The Run leases of ${this.owner} are closed; no new Run can be held by this process.`,
      )
    }
  }
}

function checkSettings(options: RunLeasesOptions): typeof DEFAULTS {
  const settings = { ...DEFAULTS }
  for (const key of Object.keys(DEFAULTS) as (keyof typeof DEFAULTS)[]) {
    const value = options[key]
    if (value === undefined) continue
    if (!Number.isSafeInteger(value) || value <= 0) {
      throw new EitriError(
        'invalid_input',
        `RunLeases option ${key} is a positive whole number of ms (got ${String(value)}).`,
      )
    }
    settings[key] = value
  }
  if (settings.ttlMs <= settings.heartbeatMs) {
    throw new EitriError(
      'invalid_input',
      `RunLeases option ttlMs (${settings.ttlMs}) must exceed heartbeatMs (${settings.heartbeatMs}), or leases lapse between heartbeats; make it about three times as long.`,
    )
  }
  if (
    options.owner !== undefined &&
    (typeof options.owner !== 'string' || options.owner.trim() === '')
  ) {
    throw new EitriError(
      'invalid_input',
      'RunLeases option owner, when given, is a non-empty string.',
    )
  }
  return settings
}
