/**
 * @module eval/sandbox/isolate-session
 * One session in the sandbox process: a V8 isolate with its own heap limit, the prelude, and
 * the eval in progress. Every entry into guest code is an isolated-vm call with the time left
 * before the eval's deadline, so code that runs after an awaited capability call is bounded too
 * (its continuation runs inside the call that delivers the capability's answer). A watchdog
 * ends an eval whose guest waits past the deadline, and disposes the isolate if isolated-vm
 * cannot interrupt it; a cancel does the same at once.
 */
import ivm from 'isolated-vm'
import {
  MAX_ANSWER_CHARS,
  MAX_ARGUMENT_CHARS,
  MAX_ARGUMENT_CHARS_IN_FLIGHT,
  MAX_CAPABILITY_CALLS,
  MAX_CONCURRENT_CAPABILITY_CALLS,
  MAX_OUTPUT_CHARS,
  MAX_VALUE_CHARS,
} from '../eval-limits.ts'
import type { EvalFailure, EvalOutcome } from '../eval-outcome.ts'
import type { GuestHandle, PreludeSettings } from './guest/prelude.ts'
import { PRELUDE_FILENAME, PRELUDE_SOURCE } from './guest/prelude-source.ts'
import { guestStack } from './guest-stack.ts'
import type { PositionMap } from './position-map.ts'
import { GUEST_FILENAME, prepareCode } from './prepare-code.ts'

/** How long isolated-vm gets to interrupt a guest past its deadline before the isolate goes. */
const INTERRUPT_GRACE_MS = 300
/** Limit of the calls that set a session up or clean up after an eval. */
const SETUP_TIMEOUT_MS = 5_000

/** Where a session sends what the guest asks and answers. */
export interface SessionEvents {
  readonly call: (
    evalId: number,
    callId: number,
    namespace: string,
    name: string,
    args: string,
  ) => void
  readonly result: (evalId: number, outcome: EvalOutcome) => void
}

interface Running {
  readonly evalId: number
  readonly deadline: number
  readonly positions: PositionMap
  /** isolated-vm calls into the guest in progress. */
  active: number
  settled: boolean
  inFlight: number
  /** The argument characters of each call in flight, and their sum. */
  readonly argumentChars: Map<number, number>
  argumentCharsInFlight: number
  calls: number
  watchdog: NodeJS.Timeout | undefined
}

type HandleFunction = keyof GuestHandle

/** A session: create it, then eval one code at a time. */
export class IsolateSession {
  readonly #isolate: ivm.Isolate
  readonly #context: ivm.Context
  readonly #namespaces: PreludeSettings['namespaces']
  readonly #events: SessionEvents
  readonly #handle: Partial<Record<HandleFunction, ivm.Reference>> = {}
  #running: Running | undefined
  #cleanup: Promise<void> = Promise.resolve()
  #disposed = false

  private constructor(
    isolate: ivm.Isolate,
    context: ivm.Context,
    namespaces: PreludeSettings['namespaces'],
    events: SessionEvents,
  ) {
    this.#isolate = isolate
    this.#context = context
    this.#namespaces = namespaces
    this.#events = events
  }

  /** Creates the isolate and installs the prelude. */
  static async create(options: {
    readonly memoryLimitMb: number
    readonly namespaces: PreludeSettings['namespaces']
    readonly events: SessionEvents
    readonly onCatastrophicError: (message: string) => void
  }): Promise<IsolateSession> {
    const isolate = new ivm.Isolate({
      memoryLimit: options.memoryLimitMb,
      onCatastrophicError: options.onCatastrophicError,
    })
    try {
      const context = await isolate.createContext()
      const session = new IsolateSession(isolate, context, options.namespaces, options.events)
      await session.#install()
      return session
    } catch (error) {
      isolate.dispose()
      throw error
    }
  }

  async #install(): Promise<void> {
    const request = new ivm.Reference((...args: unknown[]) => this.#onRequest(args))
    const report = new ivm.Reference((...args: unknown[]) => this.#onReport(args))
    const settings: PreludeSettings = {
      namespaces: this.#namespaces,
      maxOutputChars: MAX_OUTPUT_CHARS,
      maxArgumentChars: MAX_ARGUMENT_CHARS,
      render: { maxChars: MAX_VALUE_CHARS, maxDepth: 4, maxItems: 100, maxStringChars: 10_000 },
    }
    const factory: ivm.Reference = await this.#context.eval(PRELUDE_SOURCE, {
      filename: PRELUDE_FILENAME,
      timeout: SETUP_TIMEOUT_MS,
      reference: true,
    })
    const handle = (await factory.apply(
      undefined,
      [request, report, new ivm.ExternalCopy(settings).copyInto()],
      { timeout: SETUP_TIMEOUT_MS, result: { reference: true } },
    )) as ivm.Reference<GuestHandle>
    for (const name of ['start', 'deliver', 'reset', 'output'] as const) {
      this.#handle[name] = (await handle.get(name, { reference: true })) as ivm.Reference
    }
    factory.release()
    handle.release()
  }

  /** True once the isolate is gone (disposed, or over its memory limit). */
  get disposed(): boolean {
    return this.#disposed || this.#isolate.isDisposed
  }

  /** Runs one eval; its outcome goes to `events.result`. */
  async eval(evalId: number, code: string, timeoutMs: number): Promise<void> {
    await this.#cleanup
    if (this.disposed) {
      this.#events.result(evalId, lostOutcome('sandbox_reset', 'This session was reset.'))
      return
    }
    const prepared = prepareCode(code)
    if (!prepared.ok) {
      this.#events.result(evalId, {
        type: 'error',
        code: 'eval_error',
        message: prepared.message,
        output: '',
        stateKept: true,
      })
      return
    }
    const running: Running = {
      evalId,
      deadline: performance.now() + timeoutMs,
      positions: prepared.positions,
      active: 0,
      settled: false,
      inFlight: 0,
      argumentChars: new Map(),
      argumentCharsInFlight: 0,
      calls: 0,
      watchdog: undefined,
    }
    this.#running = running
    running.watchdog = setTimeout(() => this.#onDeadline(running), timeoutMs + 5)
    const start = this.#handle.start
    if (start === undefined) throw new Error('the prelude has no start')
    await this.#enter(running, (timeout) =>
      this.#context.evalClosure(prepared.script, [start.derefInto(), evalId], {
        timeout,
        filename: GUEST_FILENAME,
      }),
    )
  }

  /** Settles one capability call of the running eval. */
  async reply(
    evalId: number,
    callId: number,
    value: string | undefined,
    error: { code: string; message: string } | undefined,
  ): Promise<void> {
    const running = this.#running
    if (running === undefined || running.evalId !== evalId || running.settled) return
    running.inFlight--
    running.argumentCharsInFlight -= running.argumentChars.get(callId) ?? 0
    running.argumentChars.delete(callId)
    const ok = error === undefined
    let payload = ok ? (value ?? '') : JSON.stringify(error)
    if (payload.length > MAX_ANSWER_CHARS) {
      payload = JSON.stringify({
        code: 'limit_exceeded',
        message: `The answer is over ${MAX_ANSWER_CHARS} characters.`,
      })
      await this.#enter(running, (timeout) =>
        this.#call('deliver', [callId, false, payload], timeout),
      )
      return
    }
    await this.#enter(running, (timeout) => this.#call('deliver', [callId, ok, payload], timeout))
  }

  /** Stops the running eval if it is `evalId`. */
  cancel(evalId: number): void {
    const running = this.#running
    if (running === undefined || running.evalId !== evalId || running.settled) return
    if (running.active === 0) {
      this.#settleKept(running, 'cancelled', 'The eval was cancelled.')
      return
    }
    // isolated-vm can only interrupt a guest at its deadline or by disposing the isolate.
    this.#dispose()
    this.#settle(
      running,
      lostOutcome('cancelled', 'The eval was cancelled while it computed; the session was reset.'),
    )
  }

  /** Frees the isolate. Idempotent. */
  dispose(): void {
    const running = this.#running
    this.#dispose()
    if (running !== undefined)
      this.#settle(running, lostOutcome('sandbox_reset', 'The session was closed.'))
  }

  #dispose(): void {
    if (this.#disposed) return
    this.#disposed = true
    if (!this.#isolate.isDisposed) this.#isolate.dispose()
  }

  /** Enters the guest with the time left; a failure settles the eval. */
  async #enter<T>(
    running: Running,
    action: (timeoutMs: number) => Promise<T>,
  ): Promise<T | undefined> {
    const left = Math.ceil(running.deadline - performance.now())
    if (left <= 0) {
      this.#onDeadline(running)
      return undefined
    }
    running.active++
    try {
      return await action(left)
    } catch (error) {
      this.#onGuestFailure(running, error)
      return undefined
    } finally {
      running.active--
    }
  }

  #call(name: HandleFunction, args: unknown[], timeout: number): Promise<unknown> {
    const reference = this.#handle[name]
    if (reference === undefined) throw new Error(`prelude function ${name} missing`)
    return reference.apply(undefined, args, { timeout })
  }

  #onGuestFailure(running: Running, error: unknown): void {
    if (running.settled) return
    const message = error instanceof Error ? error.message : String(error)
    if (this.#isolate.isDisposed || this.#disposed) {
      const memory = /memory limit/i.test(message)
      this.#disposed = true
      this.#settle(
        running,
        memory
          ? lostOutcome(
              'memory_limit',
              'The session ran out of memory (its heap limit) and was reset.',
            )
          : lostOutcome('sandbox_reset', 'The session was reset.'),
      )
      return
    }
    if (/timed out/i.test(message)) {
      this.#settleKept(running, 'timeout', 'The eval ran past its time limit and was stopped.')
      return
    }
    // A syntax error V8 found when compiling (acorn let it through), or a fault of the prelude.
    const name = error instanceof Error ? error.name : 'Error'
    this.#settle(running, {
      type: 'error',
      code: 'eval_error',
      message: `${name}: ${message}`,
      output: '',
      stateKept: true,
    })
  }

  #onDeadline(running: Running): void {
    if (running.settled) return
    if (running.active === 0) {
      this.#settleKept(running, 'timeout', 'The eval ran past its time limit and was stopped.')
      return
    }
    setTimeout(() => {
      if (running.settled) return
      this.#dispose()
      this.#settle(
        running,
        lostOutcome(
          'timeout',
          'The eval ran past its time limit and could not be interrupted; the session was reset.',
        ),
      )
    }, INTERRUPT_GRACE_MS).unref()
  }

  /** Settles an eval whose isolate survives: its pending calls and output are dropped first. */
  #settleKept(running: Running, code: EvalFailure['code'], message: string): void {
    const output = this.#readOutput()
    this.#cleanup = output.then(async (text) => {
      this.#settle(running, { type: 'error', code, message, output: text, stateKept: true })
      try {
        if (!this.disposed) await this.#call('reset', [], SETUP_TIMEOUT_MS)
      } catch {
        this.#dispose()
      }
    })
  }

  async #readOutput(): Promise<string> {
    try {
      if (this.disposed) return ''
      const text = await this.#call('output', [], SETUP_TIMEOUT_MS)
      return typeof text === 'string' ? text.slice(0, MAX_OUTPUT_CHARS + 200) : ''
    } catch {
      return ''
    }
  }

  #settle(running: Running, outcome: EvalOutcome): void {
    if (running.settled) return
    running.settled = true
    clearTimeout(running.watchdog)
    if (this.#running === running) this.#running = undefined
    this.#events.result(running.evalId, outcome)
  }

  /** A capability call from the guest: `[evalId, callId, namespace, name, argsJson]`. */
  #onRequest(args: unknown[]): void {
    const [evalId, callId, namespace, name, json] = args
    const running = this.#running
    if (running === undefined || running.evalId !== evalId || running.settled) return
    if (
      typeof callId !== 'number' ||
      typeof namespace !== 'string' ||
      typeof name !== 'string' ||
      typeof json !== 'string'
    )
      return
    const refuse = (message: string): void => {
      running.inFlight++
      void this.reply(running.evalId, callId, undefined, { code: 'limit_exceeded', message })
    }
    if (!(this.#namespaces[namespace] ?? []).includes(name)) {
      refuse(`${namespace}.${name} is not a capability of this sandbox.`)
      return
    }
    if (json.length > MAX_ARGUMENT_CHARS) {
      refuse(`The arguments of ${namespace}.${name} are over ${MAX_ARGUMENT_CHARS} characters.`)
      return
    }
    if (running.calls >= MAX_CAPABILITY_CALLS) {
      refuse(`This eval made ${MAX_CAPABILITY_CALLS} capability calls, the most one eval may make.`)
      return
    }
    if (running.inFlight >= MAX_CONCURRENT_CAPABILITY_CALLS) {
      refuse(
        `This eval has ${MAX_CONCURRENT_CAPABILITY_CALLS} capability calls in flight; await some first.`,
      )
      return
    }
    if (running.argumentCharsInFlight + json.length > MAX_ARGUMENT_CHARS_IN_FLIGHT) {
      refuse(
        `This eval's calls in flight already carry ${running.argumentCharsInFlight} characters of arguments; with these ${json.length} they would pass ${MAX_ARGUMENT_CHARS_IN_FLIGHT}. Await some calls first.`,
      )
      return
    }
    running.calls++
    running.inFlight++
    running.argumentChars.set(callId, json.length)
    running.argumentCharsInFlight += json.length
    this.#events.call(running.evalId, callId, namespace, name, json)
  }

  /** The guest's answer: `[evalId, kind, valueOrMessage, typeOrStack, output]`. */
  #onReport(args: unknown[]): void {
    const [evalId, kind, first, second, output] = args
    const running = this.#running
    if (running === undefined || running.evalId !== evalId || running.settled) return
    const text = (value: unknown, limit: number): string =>
      typeof value === 'string' ? value.slice(0, limit) : ''
    const shownOutput = text(output, MAX_OUTPUT_CHARS + 200)
    if (kind === 'value') {
      this.#settle(running, {
        type: 'value',
        value: text(first, MAX_VALUE_CHARS + 200),
        valueType: text(second, 20),
        output: shownOutput,
      })
      return
    }
    const stack = guestStack(text(second, 20_000), running.positions)
    this.#settle(running, {
      type: 'error',
      code: 'eval_error',
      message: text(first, MAX_VALUE_CHARS + 200),
      ...(stack === '' ? {} : { stack }),
      output: shownOutput,
      stateKept: true,
    })
  }
}

function lostOutcome(code: EvalFailure['code'], message: string): EvalFailure {
  return { type: 'error', code, message, output: '', stateKept: false }
}
