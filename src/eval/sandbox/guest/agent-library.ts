/**
 * @module eval/sandbox/guest/agent-library
 * The guest's `agent` namespace, built in the isolate over the host's raw `agent` functions: a
 * roster value (immutable, each change answered by the host's roster rules as a new value),
 * handles on Runs, and `map`. Nothing here is trusted by the host: a roster crosses as its data,
 * a handle as its Run id, and the host checks both again. What lives here is only what cannot
 * cross: the guest's own functions (`select`'s `where`, `map`'s `fn`).
 *
 * This function's source is what runs in the isolate: it must not refer to anything outside
 * itself. It captures the built-ins it uses when the prelude runs, before any guest code.
 */
/* eslint-disable @typescript-eslint/unbound-method -- built-ins are captured unbound and called through a bound Function.prototype.call, as in the prelude. */

/** Calls one raw host function of the `agent` namespace. */
export type AgentCall = (name: string, args: unknown[]) => Promise<unknown>

/** Builds the `agent` namespace over `call`. */
export function createAgentLibrary(call: AgentCall): Record<string, unknown> {
  'use strict'
  const freeze = Object.freeze
  const isArray = Array.isArray
  const keys = Object.keys
  const hasOwn = Object.hasOwn
  const ErrorConstructor = Error
  const promiseAll = Promise.all.bind(Promise)
  const uncurry = Function.prototype.call.bind(Function.prototype.call) as (
    fn: unknown,
    self: unknown,
    ...args: unknown[]
  ) => unknown
  const then = Promise.prototype.then
  const defineProperty = Reflect.defineProperty
  const weakHas = WeakMap.prototype.has
  const weakGet = WeakMap.prototype.get
  const weakSet = WeakMap.prototype.set
  const isSafeInteger = Number.isSafeInteger

  const fail = (code: string, message: string): Error => {
    const error = new ErrorConstructor(message)
    defineProperty(error, 'code', { value: code, enumerable: true })
    return error
  }
  const after = <T, R>(promise: Promise<T>, next: (value: T) => R): Promise<R> =>
    uncurry(then, promise, next) as Promise<R>

  /** Each roster value's data, as the host answered it. */
  const rosterData = new WeakMap<object, unknown>()
  const asRoster = (data: unknown): Record<string, unknown> => {
    const roster: Record<string, unknown> = freeze({
      agents: (data as { agents: unknown }).agents,
      make: (def: unknown) => after(call('rosterMake', [data, def]), asRoster),
      revise: (id: unknown, changes: unknown) =>
        after(call('rosterRevise', [data, id, changes]), asRoster),
      lookup: (ref: unknown) => call('rosterLookup', [data, ref]),
      list: () => call('rosterList', [data]),
      select: (selector?: unknown) => {
        if (selector === undefined) return call('rosterSelect', [data, {}])
        if (typeof selector !== 'object' || selector === null || isArray(selector)) {
          // The host's refusal, word for word.
          return call('rosterSelect', [data, selector])
        }
        const given = selector as Record<string, unknown>
        const sent: Record<string, unknown> = {}
        const names = keys(given)
        for (let index = 0; index < names.length; index++) {
          const name = names[index] as string
          // A function cannot cross: `where` is applied here, after the host's filter.
          if (name === 'where' && typeof given[name] === 'function') continue
          sent[name] = given[name]
        }
        const where = typeof given['where'] === 'function' ? given['where'] : undefined
        return after(call('rosterSelect', [data, sent]), (defs) => {
          if (where === undefined) return defs
          const kept: unknown[] = []
          const list = defs as unknown[]
          for (let index = 0; index < list.length; index++) {
            if (uncurry(where, undefined, list[index]) as boolean) kept[kept.length] = list[index]
          }
          return freeze(kept)
        })
      },
      toJSON: () => ({ agents: (data as { agents: unknown }).agents }),
    })
    uncurry(weakSet, rosterData, roster, data)
    return roster
  }

  const handleOf = (id: string): Record<string, unknown> =>
    freeze({
      id,
      result: () => call('result', [id, false]),
      ownedResult: () => call('result', [id, true]),
      observe: () => call('observe', [id]),
      cancel: () => call('cancel', [id]),
    })

  /** The Run ids of `handles`, or a refusal naming the first that is not a handle. */
  const idsOf = (what: string, handles: unknown): string[] => {
    if (!isArray(handles)) {
      throw fail('invalid_input', `agent.${what} takes an array of handles from agent.hire.`)
    }
    const ids: string[] = []
    for (let index = 0; index < handles.length; index++) {
      const handle: unknown = handles[index]
      const id =
        typeof handle === 'string'
          ? handle
          : typeof handle === 'object' && handle !== null
            ? (handle as { id?: unknown }).id
            : undefined
      if (typeof id !== 'string') {
        throw fail(
          'invalid_input',
          `agent.${what}: element ${index} is not a handle from agent.hire (nor a Run id).`,
        )
      }
      ids[index] = id
    }
    return ids
  }

  return freeze({
    roster: (defs?: unknown) => after(call('roster', [defs]), asRoster),
    hire: (rosterOrFile: unknown, agent: unknown, options: unknown) => {
      let roster: unknown = rosterOrFile
      if (typeof rosterOrFile === 'object' && rosterOrFile !== null) {
        roster = uncurry(weakHas, rosterData, rosterOrFile)
          ? uncurry(weakGet, rosterData, rosterOrFile)
          : { agents: (rosterOrFile as { agents?: unknown }).agents }
      }
      return after(call('hire', [roster, agent, options]), (answer) =>
        handleOf((answer as { id: string }).id),
      )
    },
    handle: (id: unknown) => {
      if (typeof id !== 'string' || id === '') {
        throw fail('invalid_input', 'agent.handle takes the id of a Run (a string).')
      }
      return handleOf(id)
    },
    join: async (handles: unknown) => call('join', [idsOf('join', handles)]),
    race: async (handles: unknown) => call('race', [idsOf('race', handles)]),
    map: async (items: unknown, fn: unknown, options?: unknown) => {
      if (!isArray(items)) throw fail('invalid_input', 'agent.map: items must be an array.')
      if (typeof fn !== 'function') {
        throw fail('invalid_input', 'agent.map: fn must be a function (item, index) => result.')
      }
      const given =
        typeof options === 'object' && options !== null ? (options as Record<string, unknown>) : {}
      const concurrency = hasOwn(given, 'concurrency') ? given['concurrency'] : 4
      if (!isSafeInteger(concurrency) || (concurrency as number) < 1) {
        throw fail(
          'invalid_input',
          `agent.map: concurrency must be a positive whole number (got ${String(concurrency)}).`,
        )
      }
      const list = items as unknown[]
      const results: unknown[] = []
      let next = 0
      let failure: { error: unknown } | undefined
      const worker = async (): Promise<void> => {
        while (next < list.length && failure === undefined) {
          const index = next
          next += 1
          try {
            results[index] = await uncurry(fn, undefined, list[index], index)
          } catch (error) {
            failure ??= { error }
            return
          }
        }
      }
      const workers: Promise<void>[] = []
      const count = (concurrency as number) < list.length ? (concurrency as number) : list.length
      for (let index = 0; index < count; index++) workers[index] = worker()
      await promiseAll(workers)
      if (failure !== undefined) throw failure.error
      return results
    },
  })
}
