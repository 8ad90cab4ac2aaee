/**
 * @module eval/sandbox/guest/prelude
 * What runs first in every isolate, before any guest code: it removes what would escape the
 * isolate's limits (WebAssembly, SharedArrayBuffer, Atomics, FinalizationRegistry, whose
 * callbacks would run outside any deadline), installs a capturing `console` and one global
 * namespace per capability, and returns the handle the sandbox drives evals through.
 *
 * The two references to the sandbox (`request` for capability calls, `report` for answers) live
 * only in this function's closure: guest code never sees an isolated-vm object. Everything
 * crossing out is a string, bounded here; capability arguments are serialized once, so what the
 * host checks is what it uses. The function is strict, so guest code called from here cannot
 * climb to it through `arguments.callee.caller`.
 *
 * This function's source is what runs in the isolate: it must not refer to anything outside
 * itself.
 */
/* eslint-disable @typescript-eslint/unbound-method -- built-ins are captured unbound and called through a bound Function.prototype.call, so guest code that replaces them later changes nothing here. */
import type { Render, RenderLimits } from './render.ts'

/** An isolated-vm reference as the guest side holds it. */
export interface GuestReference {
  applyIgnored(receiver: undefined, args: readonly unknown[]): void
}

/**
 * Builds a namespace in the guest over its raw host functions, for a namespace whose values
 * (a roster, a handle) carry methods or take the guest's own functions.
 */
export type GuestLibrary = (
  call: (name: string, args: unknown[]) => Promise<unknown>,
) => Record<string, unknown>

/** What the sandbox tells the prelude. */
export interface PreludeSettings {
  readonly namespaces: Readonly<Record<string, readonly string[]>>
  readonly maxOutputChars: number
  readonly maxArgumentChars: number
  readonly render: RenderLimits
}

/** What the sandbox drives an eval through. */
export interface GuestHandle {
  /**
   * Declares `names` as globals (those not yet defined) and runs the eval's function with the
   * global object as `this`; its end is reported through `report`.
   */
  start(evalId: number, names: readonly string[], run: () => Promise<unknown>): void
  /** Settles one capability call: `ok` with its JSON, or an error `{code, message}` as JSON. */
  deliver(callId: number, ok: boolean, payload: string): void
  /** Forgets the pending calls and output of an eval that was stopped. */
  reset(): void
  /** The console output so far. */
  output(): string
}

/** Installs the prelude in the current global and returns the handle. */
export function installPrelude(
  request: GuestReference,
  report: GuestReference,
  settings: PreludeSettings,
  createRenderer: (limits: RenderLimits) => Render,
  libraries: Readonly<Record<string, GuestLibrary>>,
): GuestHandle {
  'use strict'
  const global = globalThis as Record<string, unknown>
  const render = createRenderer(settings.render)
  const call = Function.prototype.call
  const uncurry = <Args extends unknown[], Result>(
    method: (...args: Args) => Result,
  ): ((self: unknown, ...args: Args) => Result) => call.bind(method as never)
  const stringify = JSON.stringify
  const parse = JSON.parse
  const slice = uncurry(String.prototype.slice)
  const join = uncurry(Array.prototype.join)
  const mapGet = uncurry(Map.prototype.get)
  const mapSet = uncurry(Map.prototype.set)
  const mapDelete = uncurry(Map.prototype.delete)
  const mapClear = uncurry(Map.prototype.clear)
  const defineProperty = Reflect.defineProperty
  const describe = Reflect.getOwnPropertyDescriptor
  const freeze = Object.freeze
  const PromiseConstructor = Promise
  const promiseReject = Promise.reject.bind(Promise)
  const ErrorConstructor = Error
  const RangeErrorConstructor = RangeError
  const callWith = uncurry(Function.prototype.call) as (
    run: () => Promise<unknown>,
    self: unknown,
  ) => Promise<unknown>
  const requestCall = uncurry(request.applyIgnored)
  const reportCall = uncurry(report.applyIgnored)

  for (const name of ['WebAssembly', 'SharedArrayBuffer', 'Atomics', 'FinalizationRegistry']) {
    delete global[name]
  }

  let currentEval = 0
  let nextCall = 0
  type Waiter = { resolve: (value: unknown) => void; reject: (error: unknown) => void }
  const waiters = new Map<
    number,
    { resolve: (value: unknown) => void; reject: (error: unknown) => void }
  >()
  let output = ''
  let outputDropped = 0

  const write = (line: string): void => {
    const room = settings.maxOutputChars - output.length
    if (room <= 0) {
      outputDropped += line.length + 1
      return
    }
    if (line.length + 1 > room) {
      output += slice(line, 0, room)
      outputDropped += line.length + 1 - room
      return
    }
    output += `${line}\n`
  }
  const logger =
    (prefix: string) =>
    (...values: unknown[]): void => {
      const parts: string[] = []
      for (let index = 0; index < values.length; index++) {
        parts[index] = render(values[index], true)
      }
      write(prefix + join(parts, ' '))
    }
  const console = freeze({
    log: logger(''),
    info: logger(''),
    debug: logger(''),
    warn: logger('[warn] '),
    error: logger('[error] '),
    trace: logger('[trace] '),
    dir: logger(''),
    table: logger(''),
  })
  defineProperty(global, 'console', { value: console, writable: true, configurable: true })

  const invoke = (namespace: string, name: string, args: unknown[]): Promise<unknown> => {
    let json: string | undefined
    try {
      json = stringify(args)
    } catch (error) {
      return promiseReject(error)
    }
    if (json === undefined) json = '[]'
    if (json.length > settings.maxArgumentChars) {
      return promiseReject(
        new RangeErrorConstructor(
          `The arguments of ${namespace}.${name} are ${json.length} characters, over the limit of ${settings.maxArgumentChars}.`,
        ),
      )
    }
    const evalId = currentEval
    const callId = ++nextCall
    const arguments_ = json
    return new PromiseConstructor((resolve, reject) => {
      mapSet(waiters, callId, { resolve, reject })
      requestCall(request, undefined, [evalId, callId, namespace, name, arguments_])
    })
  }
  for (const namespace of Object.keys(settings.namespaces)) {
    const library = Object.hasOwn(libraries, namespace) ? libraries[namespace] : undefined
    if (library !== undefined) {
      const api = library((name, args) => invoke(namespace, name, args))
      defineProperty(global, namespace, { value: api, writable: true, configurable: true })
      continue
    }
    const api: Record<string, (...args: unknown[]) => Promise<unknown>> = {}
    for (const name of settings.namespaces[namespace] ?? []) {
      api[name] = (...args: unknown[]) => invoke(namespace, name, args)
    }
    defineProperty(global, namespace, { value: freeze(api), writable: true, configurable: true })
  }

  const messageOf = (error: unknown): [string, string] => {
    try {
      if (typeof error === 'object' && error !== null) {
        let stackText: unknown
        try {
          stackText = (error as { stack?: unknown }).stack
        } catch {
          stackText = undefined
        }
        const message = describe(error, 'message')
        const messageText: unknown =
          message !== undefined && 'value' in message ? message.value : undefined
        let name: unknown = 'Error'
        try {
          name = (error as { name?: unknown }).name
        } catch {
          name = 'Error'
        }
        const code = describe(error, 'code')
        const codeText =
          code !== undefined && 'value' in code && typeof code.value === 'string'
            ? ` [${slice(code.value, 0, 100)}]`
            : ''
        return [
          `${typeof name === 'string' ? name : 'Error'}${codeText}: ${typeof messageText === 'string' ? messageText : render(error, true)}`,
          typeof stackText === 'string' ? slice(stackText, 0, 20_000) : '',
        ]
      }
      return [`Uncaught ${render(error, false)}`, '']
    } catch {
      return ['Uncaught exception (it could not be described)', '']
    }
  }
  const finalOutput = (): string =>
    outputDropped === 0
      ? output
      : `${output}[console output truncated: ${outputDropped} more characters]\n`

  return freeze({
    start(evalId: number, names: readonly string[], run: () => Promise<unknown>): void {
      currentEval = evalId
      for (let index = 0; index < names.length; index++) {
        const name = names[index] as string
        if (describe(global, name) === undefined) {
          defineProperty(global, name, {
            value: undefined,
            writable: true,
            enumerable: true,
            configurable: true,
          })
        }
      }
      output = ''
      outputDropped = 0
      // Never rejects: nothing of the guest's (a replaced Promise.prototype.catch) is called.
      const finish = async (): Promise<void> => {
        let kind = 'value'
        let first: string
        let second: string
        try {
          try {
            const value = await callWith(run, global)
            first = render(value, true)
            second = value === null ? 'null' : typeof value
          } catch (error) {
            kind = 'error'
            const described = messageOf(error)
            first = slice(described[0], 0, settings.render.maxChars)
            second = described[1]
          }
        } catch {
          kind = 'error'
          first = 'Error: the eval could not be reported'
          second = ''
        }
        if (evalId !== currentEval) return
        reportCall(report, undefined, [evalId, kind, first, second, finalOutput()])
      }
      void finish()
    },
    deliver(callId: number, ok: boolean, payload: string): void {
      const waiter = mapGet(waiters, callId) as Waiter | undefined
      if (waiter === undefined) return
      mapDelete(waiters, callId)
      if (ok) {
        let value: unknown
        try {
          value = payload === '' ? undefined : parse(payload)
        } catch (error) {
          waiter.reject(error)
          return
        }
        waiter.resolve(value)
        return
      }
      let code = 'capability_failed'
      let message = 'The capability call failed.'
      try {
        const parsed = parse(payload) as { code?: unknown; message?: unknown }
        if (typeof parsed.code === 'string') code = parsed.code
        if (typeof parsed.message === 'string') message = parsed.message
      } catch {
        // keep the defaults
      }
      const error = new ErrorConstructor(message) as Error & { code: string }
      defineProperty(error, 'code', { value: code, enumerable: true })
      waiter.reject(error)
    },
    reset(): void {
      currentEval = 0
      mapClear(waiters)
      output = ''
      outputDropped = 0
    },
    output: finalOutput,
  })
}
