/**
 * @module eval/host/isolate-engine
 * The isolated-vm engine, seen from the server: sessions are isolates in one sandbox process,
 * started at the first session and started again if it dies (its sessions then answer
 * `sandbox_reset`). The server never loads isolated-vm itself.
 *
 * Besides the sandbox's own deadline, the server keeps an outer fence: an eval that has not
 * answered a second after its timeout (or after a cancel) gets the sandbox pinged; if the
 * sandbox answers and the eval still has not, the eval is answered for and its session given
 * up. The sandbox itself, which holds every connection's sessions, is killed and replaced only
 * when it is hung: it owes the ping and sends nothing at all for a long while
 * (`sandbox-liveness.ts`). A sandbox busy with large messages is not hung.
 */
import { setTimeout as delay } from 'node:timers/promises'
import { EitriError } from '../../errors/eitri-error.ts'
import type {
  CapabilityHandler,
  CreateSessionOptions,
  EngineSession,
  EvalEngine,
  EvalEngineCapabilities,
  EvalOptions,
  SessionLoss,
} from '../eval-engine.ts'
import { CANCEL_GRACE_MS, MAX_ANSWER_CHARS, TIMEOUT_GRACE_MS } from '../eval-limits.ts'
import type { EvalFailure, EvalOutcome } from '../eval-outcome.ts'
import { JsonAnswer } from '../json-answer.ts'
import { parsePlainJson } from '../plain-json.ts'
import type { SandboxMessage } from '../sandbox-protocol.ts'
import { probeLiveness, PING_LIMIT_MS, SILENCE_LIMIT_MS } from './sandbox-liveness.ts'
import type { SandboxConfinement } from './sandbox-confinement.ts'
import { SandboxProcess, type SandboxTraffic } from './sandbox-process.ts'

/** How long a new session may take. */
const CREATE_TIMEOUT_MS = 10_000
/** How long a stats request may take. */
const STATS_TIMEOUT_MS = 10_000

interface PendingEval {
  readonly session: IsolateEngineSession
  readonly resolve: (outcome: EvalOutcome) => void
  readonly capabilities: CapabilityHandler | undefined
  /** Aborts the eval's capability calls when it ends. */
  readonly calls: AbortController
}

/** Options of {@link IsolateEngine}. */
export interface IsolateEngineOptions {
  /** The Node that runs the sandbox. @default the server's own */
  readonly nodePath?: string
  /**
   * Whether the sandbox process runs inside bubblewrap. `none` leaves the isolate as the only
   * wall; only for hosts where bubblewrap cannot run, and never the default. Without it, a
   * sandbox that bubblewrap cannot start makes every eval answer `jail_unavailable`.
   * @default 'bubblewrap'
   */
  readonly confinement?: SandboxConfinement
  /** The bubblewrap program. @default 'bwrap' */
  readonly bwrap?: string
  /**
   * How long a sandbox that owes a ping answer may send nothing before it is killed as hung.
   * @default SILENCE_LIMIT_MS (10 s)
   */
  readonly silenceLimitMs?: number
}

/** The isolated-vm engine. */
export class IsolateEngine implements EvalEngine {
  readonly name = 'isolated-vm'
  readonly capabilities: EvalEngineCapabilities = {
    keepsStateOnTimeout: true,
    keepsStateOnCancel: false,
    enforcesMemoryLimit: true,
    acceptsTypeScript: true,
  }
  readonly #options: IsolateEngineOptions
  #process: Promise<SandboxProcess> | undefined
  /** The started process, for the hot path (no promise to await). */
  #ready: SandboxProcess | undefined
  readonly #sessions = new Map<string, IsolateEngineSession>()
  readonly #creating = new Map<string, (error: string | undefined) => void>()
  readonly #evals = new Map<number, PendingEval>()
  /** Stats requests waiting for the sandbox: each settles when it answers, dies or is slow. */
  readonly #stats = new Map<
    number,
    {
      readonly resolve: (stats: { rss: number; sessions: number }) => void
      readonly reject: (error: Error) => void
    }
  >()
  /** The liveness probe in progress, shared by every eval past its fence. */
  #probe: Promise<void> | undefined
  #nextId = 1
  #closed = false

  constructor(options: IsolateEngineOptions = {}) {
    this.#options = options
  }

  async createSession(options: CreateSessionOptions): Promise<EngineSession> {
    const sandbox = await this.#sandbox()
    const id = `s${this.#nextId++}`
    const created = new Promise<string | undefined>((resolve) => {
      this.#creating.set(id, resolve)
      setTimeout(() => resolve('it took too long'), CREATE_TIMEOUT_MS).unref()
    })
    sandbox.send({
      type: 'create',
      session: id,
      memoryLimitMb: options.memoryLimitMb,
      namespaces: options.namespaces,
    })
    const error = await created
    this.#creating.delete(id)
    if (error !== undefined) {
      sandbox.send({ type: 'dispose', session: id })
      throw new EitriError('sandbox_reset', `The code sandbox could not create a session: ${error}`)
    }
    const session = new IsolateEngineSession(id, this)
    this.#sessions.set(id, session)
    return session
  }

  /**
   * The sandbox process's resident memory and session count (for measurements).
   *
   * @throws EitriError `sandbox_reset` when the sandbox dies or does not answer in time.
   */
  async stats(): Promise<{ rss: number; sessions: number; pid: number | undefined }> {
    const sandbox = await this.#sandbox()
    const answer = await this.#requestStats(sandbox, STATS_TIMEOUT_MS)
    return { ...answer, pid: sandbox.pid }
  }

  /**
   * What crossed the pipes of the running sandbox so far; undefined while none runs.
   * @internal
   */
  traffic(): SandboxTraffic | undefined {
    return this.#ready?.traffic
  }

  /** Asks `sandbox` for its stats; settles on its answer, its death or `timeoutMs`. */
  #requestStats(
    sandbox: SandboxProcess,
    timeoutMs: number,
  ): Promise<{ rss: number; sessions: number }> {
    const requestId = this.#nextId++
    return new Promise<{ rss: number; sessions: number }>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.#stats.delete(requestId)
        reject(new EitriError('sandbox_reset', 'The code sandbox did not answer in time.'))
      }, timeoutMs)
      timer.unref()
      const done = (): void => {
        clearTimeout(timer)
        this.#stats.delete(requestId)
      }
      this.#stats.set(requestId, {
        resolve: (stats) => {
          done()
          resolve(stats)
        },
        reject: (error) => {
          done()
          reject(error)
        },
      })
      if (!sandbox.send({ type: 'stats', requestId }))
        this.#stats
          .get(requestId)
          ?.reject(new EitriError('sandbox_reset', 'The code sandbox is not running.'))
    })
  }

  async close(): Promise<void> {
    if (this.#closed) return
    this.#closed = true
    this.#loseAll('The code sandbox was closed.', 'closed')
    const sandbox = this.#process
    this.#process = undefined
    this.#ready = undefined
    await (await sandbox?.catch(() => undefined))?.close()
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.close()
  }

  /** @internal Runs one eval of `session`. */
  async evaluate(
    session: IsolateEngineSession,
    code: string,
    options: EvalOptions,
  ): Promise<EvalOutcome> {
    if (session.lost !== undefined)
      return failure('sandbox_reset', 'This session was reset.', false)
    if (options.signal?.aborted === true)
      return failure('cancelled', 'The eval was cancelled before it started.', true)
    let sandbox: SandboxProcess
    try {
      sandbox = this.#ready?.alive === true ? this.#ready : await this.#sandbox()
    } catch (error) {
      return failure('sandbox_reset', (error as Error).message, false)
    }
    const evalId = this.#nextId++
    const calls = new AbortController()
    let fence: NodeJS.Timeout | undefined
    const onAbort = (): void => {
      sandbox.send({ type: 'cancel', evalId })
      clearTimeout(fence)
      fence = setTimeout(
        () => void this.#fence(evalId, 'cancelled', 'The eval was cancelled.'),
        CANCEL_GRACE_MS,
      )
    }
    try {
      const outcome = new Promise<EvalOutcome>((resolve) => {
        this.#evals.set(evalId, { session, resolve, capabilities: options.capabilities, calls })
      })
      sandbox.send(
        { type: 'eval', session: session.id, evalId, code, timeoutMs: options.timeoutMs },
        undefined,
        session.id,
      )
      fence = setTimeout(
        () =>
          void this.#fence(evalId, 'timeout', 'The eval ran past its time limit and did not stop.'),
        options.timeoutMs + TIMEOUT_GRACE_MS,
      )
      options.signal?.addEventListener('abort', onAbort, { once: true })
      const answer = await outcome
      if (answer.type === 'error' && !answer.stateKept) {
        session.markLost(lossOf(answer.code))
        sandbox.send({ type: 'dispose', session: session.id })
      }
      return answer
    } finally {
      clearTimeout(fence)
      options.signal?.removeEventListener('abort', onAbort)
      calls.abort()
      this.#evals.delete(evalId)
    }
  }

  /** @internal Forgets a session, and frees it in the sandbox unless it is already gone there. */
  release(session: IsolateEngineSession, free: boolean): void {
    this.#sessions.delete(session.id)
    if (!free) return
    void this.#process?.then(
      (sandbox) => sandbox.send({ type: 'dispose', session: session.id }),
      () => undefined,
    )
  }

  /**
   * The outer fence, for an eval the sandbox did not answer in time. A hung sandbox is killed
   * (every eval then answers `sandbox_reset`). A live one is given a second round, since its own
   * answer may be just behind the ping's (a loaded sandbox runs its timers late); only an eval
   * still unanswered after that is answered for here, and its session given up.
   */
  async #fence(evalId: number, code: 'timeout' | 'cancelled', message: string): Promise<void> {
    for (let round = 0; round < 2; round++) {
      if (!this.#evals.has(evalId)) return
      if (round > 0) await delay(TIMEOUT_GRACE_MS, undefined, { ref: false })
      await this.#checkHealth()
    }
    const pending = this.#evals.get(evalId)
    if (pending === undefined) return
    pending.resolve(failure(code, `${message} The session was reset.`, false))
  }

  /** Probes the sandbox, and kills it if it is hung; one probe at a time. */
  #checkHealth(): Promise<void> {
    this.#probe ??= this.#probeSandbox().finally(() => {
      this.#probe = undefined
    })
    return this.#probe
  }

  async #probeSandbox(): Promise<void> {
    const sandbox = await this.#process?.catch(() => undefined)
    if (sandbox === undefined || !sandbox.alive) return
    const silenceLimitMs = this.#options.silenceLimitMs ?? SILENCE_LIMIT_MS
    const liveness = await probeLiveness({
      // Once the probe has its verdict, a late answer or a rejection changes nothing.
      ping: this.#requestStats(sandbox, PING_LIMIT_MS + silenceLimitMs),
      lastHeardAt: () => sandbox.lastHeardAt,
      alive: () => sandbox.alive,
      silenceLimitMs,
    })
    if (liveness !== 'hung') return
    await sandbox.close()
    this.#onExit(
      sandbox,
      `the sandbox sent nothing for ${Math.round(silenceLimitMs / 1000)} s and did not answer a ping`,
    )
  }

  #sandbox(): Promise<SandboxProcess> {
    if (this.#closed)
      return Promise.reject(new EitriError('sandbox_reset', 'The code sandbox is closed.'))
    if (this.#process === undefined) {
      const starting: Promise<SandboxProcess> = SandboxProcess.start(
        {
          message: (message) => this.#receive(message),
          exit: (reason) => void starting.then((sandbox) => this.#onExit(sandbox, reason)),
        },
        {
          nodePath: this.#options.nodePath,
          confinement: this.#options.confinement,
          bwrap: this.#options.bwrap,
        },
      )
      this.#process = starting
      starting.then(
        (sandbox) => {
          if (this.#process === starting) this.#ready = sandbox
        },
        () => {
          if (this.#process === starting) this.#process = undefined
        },
      )
    }
    return this.#process
  }

  #onExit(sandbox: SandboxProcess, reason: string): void {
    void this.#process?.then(
      (current) => {
        if (current !== sandbox) return
        this.#process = undefined
        this.#ready = undefined
        this.#loseAll(
          `The code sandbox restarted (${reason}); the session's definitions are gone.`,
          'sandbox_reset',
        )
        // Start the next one now, so the next eval does not wait for it.
        if (!this.#closed) this.#sandbox().catch(() => undefined)
      },
      () => undefined,
    )
  }

  #loseAll(message: string, loss: SessionLoss): void {
    for (const session of this.#sessions.values()) session.markLost(loss)
    this.#sessions.clear()
    for (const pending of this.#evals.values())
      pending.resolve(failure('sandbox_reset', message, false))
    for (const resolve of this.#creating.values()) resolve(message)
    for (const pending of this.#stats.values())
      pending.reject(new EitriError('sandbox_reset', message))
  }

  #receive(message: SandboxMessage): void {
    switch (message.type) {
      case 'ready':
        return
      case 'created':
        this.#creating.get(message.session)?.(message.error)
        return
      case 'result':
        this.#evals.get(message.evalId)?.resolve(message.outcome)
        return
      case 'stats':
        this.#stats
          .get(message.requestId)
          ?.resolve({ rss: message.rss, sessions: message.sessions })
        return
      case 'call':
        void this.#serveCall(message)
        return
    }
  }

  async #serveCall(message: Extract<SandboxMessage, { type: 'call' }>): Promise<void> {
    const pending = this.#evals.get(message.evalId)
    if (pending === undefined) return
    const reply = (
      answer: { value?: string; error?: { code: string; message: string } },
      written?: () => void,
    ): void => {
      const sandbox = this.#ready
      if (!this.#evals.has(message.evalId) || sandbox === undefined) {
        written?.()
        return
      }
      sandbox.send(
        { type: 'reply', evalId: message.evalId, callId: message.callId, ...answer },
        written,
        pending.session.id,
      )
    }
    const name = `${message.namespace}.${message.name}`
    const parsed = parsePlainJson(message.args)
    if (!parsed.ok || !Array.isArray(parsed.value)) {
      reply({
        error: {
          code: 'invalid_input',
          message: `Invalid arguments for ${name}: ${parsed.ok ? 'not a list' : parsed.message}.`,
        },
      })
      return
    }
    if (pending.capabilities === undefined) {
      reply({
        error: {
          code: 'not_available',
          message: `${name} is not available: this eval has no capabilities.`,
        },
      })
      return
    }
    let answer: unknown
    try {
      answer = await pending.capabilities(
        message.namespace,
        message.name,
        parsed.value,
        pending.calls.signal,
      )
    } catch (error) {
      reply({
        error: EitriError.isInstance(error)
          ? { code: error.code, message: error.message }
          : { code: 'tool_failed', message: `${name} failed.` },
      })
      return
    }
    // What the answer holds is given back once it is handed to the sandbox (or dropped).
    const delivered = answer instanceof JsonAnswer ? () => answer.delivered() : undefined
    const json =
      answer instanceof JsonAnswer
        ? answer.json
        : answer === undefined
          ? ''
          : JSON.stringify(answer)
    if (json.length > MAX_ANSWER_CHARS) {
      delivered?.()
      reply({
        error: {
          code: 'limit_exceeded',
          message: `The answer of ${name} is over ${MAX_ANSWER_CHARS} characters.`,
        },
      })
      return
    }
    reply({ value: json }, delivered)
  }
}

/** A session of the isolated-vm engine. */
export class IsolateEngineSession implements EngineSession {
  readonly id: string
  readonly #engine: IsolateEngine
  #lost: SessionLoss | undefined

  constructor(id: string, engine: IsolateEngine) {
    this.id = id
    this.#engine = engine
  }

  get lost(): SessionLoss | undefined {
    return this.#lost
  }

  /** @internal */
  markLost(loss: SessionLoss): void {
    this.#lost ??= loss
  }

  eval(code: string, options: EvalOptions): Promise<EvalOutcome> {
    return this.#engine.evaluate(this, code, options)
  }

  async dispose(): Promise<void> {
    if (this.#lost === 'closed') return
    const wasLost = this.#lost !== undefined
    this.#lost = 'closed'
    this.#engine.release(this, !wasLost)
  }

  [Symbol.asyncDispose](): Promise<void> {
    return this.dispose()
  }
}

function failure(code: EvalFailure['code'], message: string, stateKept: boolean): EvalFailure {
  return { type: 'error', code, message, output: '', stateKept }
}

function lossOf(code: EvalFailure['code']): SessionLoss {
  return code === 'eval_error' ? 'sandbox_reset' : code
}
