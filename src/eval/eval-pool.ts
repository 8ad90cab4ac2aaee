/**
 * @module eval/eval-pool
 * Every eval session of a server. A session belongs to the caller (owner) that made it: an
 * owner names only its own sessions, so naming another connection's session just names one of
 * its own. Evals of one session run one after another. Sessions end when their owner closes,
 * after an idle timeout, or by eviction when the server is at its session cap; the next eval in
 * a session that ended says so (`sessionReset`).
 *
 * Owners share one sandbox, so each is held to its share: it runs a few evals at once (more
 * wait their turn), its calls hold a part of the server's bytes in flight, and eviction takes a
 * session only from an owner that holds more sessions than the one asking (its own least
 * recently used otherwise). One connection's load slows that connection, not the others.
 */
import { EitriError } from '../errors/eitri-error.ts'
import type {
  CodeEvaluator,
  EvalAnswer,
  EvalOutcome,
  EvalRequest,
} from '../ports/code-evaluator.ts'
import type { ToolContext } from '../tool/tool-context.ts'
import type { Toolset } from '../tool/toolset.ts'
import { ByteBudget } from './byte-budget.ts'
import type { CapabilityCatalog } from './capability-catalog.ts'
import type { CapabilitySettings } from './capability-settings.ts'
import { secretMaskerFor, type MaskSettings } from './capabilities/http/secret-placeholders.ts'
import type { EngineSession, EvalEngine, SessionLoss } from './eval-engine.ts'
import {
  DEFAULT_EVAL_TIMEOUT_MS,
  DEFAULT_IDLE_TIMEOUT_MS,
  DEFAULT_MAX_SESSIONS,
  DEFAULT_MEMORY_LIMIT_MB,
  DEFAULT_OWNER_RUNNING_EVALS,
  OWNER_BYTES_IN_FLIGHT,
  SERVER_BYTES_IN_FLIGHT,
  SESSION_BYTES_IN_FLIGHT,
} from './eval-limits.ts'

/** The session an owner gets when it names none. */
export const DEFAULT_SESSION = 'default'
/** Ended sessions an owner is told about, at most. */
const MAX_REMEMBERED_ENDINGS = 256

/** How to run a pool. */
export interface EvalPoolOptions {
  /** Makes the engine, at the first session. */
  readonly engine: () => EvalEngine
  readonly catalog: CapabilityCatalog
  readonly settings: CapabilitySettings
  /** What `tools.call` runs. */
  readonly toolset?: Toolset | undefined
  /** @default 16 */
  readonly maxSessions?: number | undefined
  /** @default 30 minutes */
  readonly idleTimeoutMs?: number | undefined
  /** @default 128 */
  readonly memoryLimitMb?: number | undefined
  /** @default 60 000 */
  readonly defaultTimeoutMs?: number | undefined
  /** Bytes capability calls may hold at once, per session, per owner and for the whole server. */
  readonly bytesInFlight?:
    { readonly session?: number; readonly owner?: number; readonly server?: number } | undefined
  /** Evals one owner runs at once; more wait their turn. @default 4 */
  readonly ownerRunningEvals?: number | undefined
}

interface Entry {
  readonly key: string
  readonly owner: EvalOwner
  readonly name: string
  session: EngineSession | undefined
  /** The bytes this session's capability calls may hold at once. */
  readonly budget: ByteBudget
  queue: Promise<unknown>
  busy: number
  idleTimer: NodeJS.Timeout | undefined
  /** Why the previous session of this name ended, until the next eval says so. */
  reset: SessionLoss | undefined
}

/** The eval sessions of one server. */
export class EvalPool implements AsyncDisposable {
  readonly #options: EvalPoolOptions
  readonly #entries = new Map<string, Entry>()
  readonly #owners = new Set<EvalOwner>()
  readonly #budget: ByteBudget
  #engine: EvalEngine | undefined
  #nextOwner = 1
  #closed = false

  constructor(options: EvalPoolOptions) {
    this.#options = options
    this.#budget = new ByteBudget(options.bytesInFlight?.server ?? SERVER_BYTES_IN_FLIGHT)
  }

  /** The bytes every session's capability calls hold at once (and the most they held). */
  get bytesInFlight(): ByteBudget {
    return this.#budget
  }

  /** The most sessions alive at once. */
  get maxSessions(): number {
    return this.#options.maxSessions ?? DEFAULT_MAX_SESSIONS
  }

  /** Sessions alive now. */
  get liveSessions(): number {
    let live = 0
    for (const entry of this.#entries.values()) if (entry.session !== undefined) live++
    return live
  }

  /** The engine, started if it was not. */
  engine(): EvalEngine {
    if (this.#closed) throw new EitriError('sandbox_reset', 'The code sandbox is closed.')
    this.#engine ??= this.#options.engine()
    return this.#engine
  }

  /**
   * A new owner: one per MCP connection or library caller. `toolset` narrows what its evals'
   * `tools.call` may run (a Run's own tools); @default the pool's toolset
   */
  owner(options: { readonly toolset?: Toolset | undefined } = {}): EvalOwner {
    if (this.#closed) throw new EitriError('not_available', 'The code sandbox is closed.')
    const owner = new EvalOwner(`o${this.#nextOwner++}`, this, {
      toolset: options.toolset ?? this.#options.toolset,
      budget: new ByteBudget(
        this.#options.bytesInFlight?.owner ?? OWNER_BYTES_IN_FLIGHT,
        this.#budget,
      ),
      runningEvals: this.#options.ownerRunningEvals ?? DEFAULT_OWNER_RUNNING_EVALS,
    })
    this.#owners.add(owner)
    return owner
  }

  /** Ends every session and the engine. Idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return
    this.#closed = true
    await Promise.all([...this.#owners].map((owner) => owner.close()))
    await this.#engine?.close()
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close()
  }

  /** @internal */
  async evaluate(owner: EvalOwner, request: EvalRequest, ctx: ToolContext): Promise<EvalAnswer> {
    const name = request.session ?? DEFAULT_SESSION
    const key = `${owner.id}\u0000${name}`
    let entry = this.#entries.get(key)
    if (entry === undefined) {
      entry = {
        key,
        owner,
        name,
        session: undefined,
        budget: new ByteBudget(
          this.#options.bytesInFlight?.session ?? SESSION_BYTES_IN_FLIGHT,
          owner.budget,
        ),
        queue: Promise.resolve(),
        busy: 0,
        idleTimer: undefined,
        reset: owner.takeEnding(name),
      }
    }
    // Most recently used last.
    this.#entries.delete(key)
    this.#entries.set(key, entry)
    const current = entry
    current.busy++
    clearTimeout(current.idleTimer)
    const answer = current.queue.then(() => this.#run(current, request, ctx))
    current.queue = answer.catch(() => undefined)
    try {
      return await answer
    } finally {
      current.busy--
      if (current.busy === 0 && this.#entries.get(key) === current) this.#armIdle(current)
    }
  }

  async #run(entry: Entry, request: EvalRequest, ctx: ToolContext): Promise<EvalAnswer> {
    const started = performance.now()
    try {
      await entry.owner.turns.acquire(1, ctx.signal)
    } catch {
      // Only a cancel ends the wait: a turn never asks for more than there is.
      return {
        outcome: {
          type: 'error',
          code: 'cancelled',
          message: `The eval was cancelled before it started: it was waiting its turn (a connection runs at most ${entry.owner.turns.limit} evals at once).`,
          output: '',
          stateKept: true,
        },
        session: entry.name,
        toolCalls: 0,
        durationMs: Math.round(performance.now() - started),
      }
    }
    try {
      return await this.#runTurn(entry, request, ctx, started)
    } finally {
      entry.owner.turns.release(1)
    }
  }

  async #runTurn(
    entry: Entry,
    request: EvalRequest,
    ctx: ToolContext,
    started: number,
  ): Promise<EvalAnswer> {
    if (entry.session?.lost !== undefined) {
      entry.reset ??= entry.session.lost
      entry.session = undefined
    }
    entry.session ??= await this.#createSession(entry)
    const usage = { toolCalls: 0 }
    const outcome = await entry.session.eval(request.code, {
      timeoutMs: request.timeoutMs ?? this.#options.defaultTimeoutMs ?? DEFAULT_EVAL_TIMEOUT_MS,
      signal: ctx.signal,
      capabilities: this.#options.catalog.handler({
        ctx,
        toolset: entry.owner.toolset,
        settings: this.#options.settings,
        usage,
        budget: entry.budget,
      }),
    })
    const reset = entry.reset
    entry.reset = undefined
    return {
      outcome: maskOutcome(outcome, this.#options.settings),
      session: entry.name,
      ...(reset === undefined ? {} : { sessionReset: describeLoss(reset, this) }),
      toolCalls: usage.toolCalls,
      durationMs: Math.round(performance.now() - started),
    }
  }

  async #createSession(entry: Entry): Promise<EngineSession> {
    while (this.liveSessions >= this.maxSessions) {
      const victim = this.#victimFor(entry)
      if (victim === undefined) {
        const mine = this.#sessionsHeld().get(entry.owner) ?? 0
        throw new EitriError(
          'limit_exceeded',
          `All ${this.maxSessions} eval sessions are busy or held by other connections (this one holds ${mine}); try again when one of this connection's evals finishes, or reuse one of its sessions instead of naming a new one.`,
        )
      }
      await this.#end(victim, 'evicted')
    }
    return this.engine().createSession({
      memoryLimitMb: this.#options.memoryLimitMb ?? DEFAULT_MEMORY_LIMIT_MB,
      namespaces: this.#options.catalog.namespaces(),
    })
  }

  /**
   * The session to end to make room for `entry`'s: an idle one, of the owner holding the most
   * sessions, least recently used first. Another owner's session is taken only if that owner
   * holds more than the asking owner will (so a connection making many sessions ends its own,
   * never the one session of another); the asking owner's own may always be taken.
   */
  #victimFor(entry: Entry): Entry | undefined {
    const held = this.#sessionsHeld()
    const mine = (held.get(entry.owner) ?? 0) + 1
    let victim: Entry | undefined
    let victimHolds = 0
    // Least recently used first: the first of the most-holding owner wins.
    for (const candidate of this.#entries.values()) {
      if (candidate.session === undefined || candidate.busy > 0 || candidate === entry) continue
      const theirs = held.get(candidate.owner) ?? 0
      if (candidate.owner !== entry.owner && theirs <= mine) continue
      if (victim === undefined || theirs > victimHolds) {
        victim = candidate
        victimHolds = theirs
      }
    }
    return victim
  }

  /** Live sessions per owner. */
  #sessionsHeld(): Map<EvalOwner, number> {
    const held = new Map<EvalOwner, number>()
    for (const entry of this.#entries.values()) {
      if (entry.session !== undefined) held.set(entry.owner, (held.get(entry.owner) ?? 0) + 1)
    }
    return held
  }

  #armIdle(entry: Entry): void {
    const idleMs = this.#options.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS
    entry.idleTimer = setTimeout(() => {
      if (entry.busy === 0 && this.#entries.get(entry.key) === entry) void this.#end(entry, 'idle')
    }, idleMs)
    entry.idleTimer.unref()
  }

  /** Ends one session; its owner hears why at its next eval under that name. */
  async #end(entry: Entry, loss: SessionLoss): Promise<void> {
    clearTimeout(entry.idleTimer)
    this.#entries.delete(entry.key)
    if (loss !== 'closed') entry.owner.rememberEnding(entry.name, loss)
    await entry.session?.dispose()
  }

  /** @internal Ends every session of `owner`. */
  async closeOwner(owner: EvalOwner): Promise<void> {
    this.#owners.delete(owner)
    await Promise.all(
      [...this.#entries.values()]
        .filter((entry) => entry.owner === owner)
        .map((entry) => this.#end(entry, 'closed')),
    )
  }
}

/**
 * `outcome` with every configured secret's and model key's value masked in what it says. The
 * guest only ever holds placeholders and masked answers; this is the last check before the
 * answer reaches the model (code that spells a value out, a value pieced together from parts, a
 * key read from a file or a tool's result).
 */
function maskOutcome(outcome: EvalOutcome, settings: MaskSettings): EvalOutcome {
  if (Object.keys(settings.secrets).length === 0 && settings.keyVariables.length === 0)
    return outcome
  const masker = secretMaskerFor(settings)
  if (outcome.type === 'value') {
    return { ...outcome, value: masker.text(outcome.value), output: masker.text(outcome.output) }
  }
  return {
    ...outcome,
    message: masker.text(outcome.message),
    output: masker.text(outcome.output),
    ...(outcome.stack === undefined ? {} : { stack: masker.text(outcome.stack) }),
  }
}

/** One caller's sessions: what a connection's tool calls evaluate through. */
export class EvalOwner implements CodeEvaluator<ToolContext>, AsyncDisposable {
  readonly id: string
  /** The bytes the capability calls of all this owner's sessions may hold at once. */
  readonly budget: ByteBudget
  /**
   * This owner's evals running now, counted in evals rather than bytes (the same
   * first-come-first-served wait, ended by the eval's signal).
   */
  readonly turns: ByteBudget
  /** What its evals' `tools.call` runs. */
  readonly toolset: Toolset | undefined
  readonly #pool: EvalPool
  readonly #endings = new Map<string, SessionLoss>()
  #closed = false

  /** @internal Made by {@link EvalPool.owner}. */
  constructor(
    id: string,
    pool: EvalPool,
    limits: {
      readonly budget: ByteBudget
      readonly runningEvals: number
      readonly toolset: Toolset | undefined
    },
  ) {
    this.id = id
    this.toolset = limits.toolset
    this.#pool = pool
    this.budget = limits.budget
    this.turns = new ByteBudget(limits.runningEvals)
  }

  evaluate(request: EvalRequest, ctx: ToolContext): Promise<EvalAnswer> {
    if (this.#closed) {
      return Promise.reject(new EitriError('not_available', 'These eval sessions are closed.'))
    }
    return this.#pool.evaluate(this, request, ctx)
  }

  /** @internal */
  rememberEnding(name: string, loss: SessionLoss): void {
    this.#endings.delete(name)
    this.#endings.set(name, loss)
    if (this.#endings.size > MAX_REMEMBERED_ENDINGS) {
      const oldest = this.#endings.keys().next().value
      if (oldest !== undefined) this.#endings.delete(oldest)
    }
  }

  /** @internal */
  takeEnding(name: string): SessionLoss | undefined {
    const loss = this.#endings.get(name)
    this.#endings.delete(name)
    return loss
  }

  /** Ends every session of this owner. Idempotent. */
  async close(): Promise<void> {
    if (this.#closed) return
    this.#closed = true
    await this.#pool.closeOwner(this)
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close()
  }
}

function describeLoss(loss: SessionLoss, pool: EvalPool): string {
  switch (loss) {
    case 'idle':
      return 'the session ended after being idle; earlier definitions are gone'
    case 'evicted':
      return `the session was ended to make room (at most ${pool.maxSessions} sessions live at once, least recently used first); earlier definitions are gone`
    case 'sandbox_reset':
      return 'the code sandbox restarted; earlier definitions are gone'
    case 'memory_limit':
      return 'an eval ran out of memory; earlier definitions are gone'
    case 'timeout':
      return 'an eval ran past its time limit and could not be interrupted; earlier definitions are gone'
    case 'cancelled':
      return 'an eval was cancelled while it computed; earlier definitions are gone'
    case 'closed':
      return 'the session was closed; earlier definitions are gone'
  }
}
