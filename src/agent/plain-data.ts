/**
 * @module agent/plain-data
 * Whether a value is plain JSON data, checked before any schema sees it. An agent definition
 * is portable: it is saved to a file, hashed and handed to other processes, so it may hold only
 * what JSON can say. A function, a class instance, a cycle or a getter would be lost, changed or
 * run on the way; refusing them here, with the path, tells the author which value to replace.
 */
import { MAX_JSON_DEPTH } from '../eval/eval-limits.ts'
import { FORBIDDEN_KEYS } from '../eval/plain-json.ts'
import { fieldPath } from '../tool/validate-input.ts'

/** Where a value stops being plain JSON data, and why. */
export interface PlainDataProblem {
  /** The full path of the value, as keys and indices, starting with the `at` given. */
  readonly path: readonly (string | number)[]
  /** What was found there and what to use instead; read by models. */
  readonly reason: string
}

/**
 * The first place where `value` is not plain JSON data, or `undefined` when it all is: `null`,
 * booleans, finite numbers, strings, dense arrays and objects whose prototype is `Object` (or
 * none), at most {@link MAX_JSON_DEPTH} deep.
 *
 * @example
 * findNonPlainData({ a: [1, new Date()] }) // { path: ['a', 1], reason: 'a Date, not plain JSON data; …' }
 */
export function findNonPlainData(
  value: unknown,
  at: readonly (string | number)[] = [],
): PlainDataProblem | undefined {
  // Iterative, so a deep value costs a refusal, not a stack overflow. A frame with `leave` marks
  // the end of a container's children: the containers entered and not yet left are the path
  // from the top to the current value, so meeting one of them again is a cycle, while a value
  // shared by two branches (which JSON simply writes twice) is not.
  const pending: Frame[] = [{ value, path: at }]
  const onPath = new Map<object, readonly (string | number)[]>()
  let visited = 0
  while (pending.length > 0) {
    const item = pending.pop() as Frame
    if (item.leave === true) {
      onPath.delete(item.value as object)
      continue
    }
    if (++visited > MAX_PLAIN_DATA_VALUES) {
      return { path: item.path, reason: `more than ${MAX_PLAIN_DATA_VALUES} values in all` }
    }
    const problem = scalarProblem(item.value)
    if (problem !== undefined) return { path: item.path, reason: problem }
    if (typeof item.value !== 'object' || item.value === null) continue
    const container = item.value
    const earlier = onPath.get(container)
    if (earlier !== undefined) {
      return {
        path: item.path,
        reason: `refers back to ${earlier.length === 0 ? 'the value itself' : fieldPath(earlier)} (a cycle); JSON data is a tree, so write the value out instead`,
      }
    }
    if (item.path.length - at.length >= MAX_JSON_DEPTH) {
      return { path: item.path, reason: `nested deeper than ${MAX_JSON_DEPTH} levels` }
    }
    const children = childrenOf(container)
    if (typeof children === 'string') return { path: item.path, reason: children }
    onPath.set(container, item.path)
    pending.push({ value: container, path: item.path, leave: true })
    // Reversed, so the first problem in reading order is the one reported.
    for (const [key, child] of children.reverse())
      pending.push({ value: child, path: [...item.path, key] })
  }
  return undefined
}

/** Values checked at most, so a value whose branches share one object many times stays cheap. */
export const MAX_PLAIN_DATA_VALUES = 1_000_000

interface Frame {
  readonly value: unknown
  readonly path: readonly (string | number)[]
  readonly leave?: true
}

/** Why a value that is not a container is not JSON data, if it is not. */
function scalarProblem(value: unknown): string | undefined {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return undefined
    case 'number':
      return Number.isFinite(value)
        ? undefined
        : `${String(value)} is not a JSON number; use a finite number or a string`
    case 'undefined':
      return 'undefined is not JSON data; leave the key out, or use null'
    case 'function':
      return 'a function is not portable data; an agent definition holds data only (describe the behaviour with the program field)'
    case 'symbol':
      return 'a symbol is not JSON data; use a string'
    case 'bigint':
      return 'a bigint is not a JSON number; use a number or a string'
    case 'object':
      if (value === null || Array.isArray(value)) return undefined
      return plainObjectProblem(value)
  }
}

function plainObjectProblem(value: object): string | undefined {
  const prototype = Object.getPrototypeOf(value) as object | null
  if (prototype === Object.prototype || prototype === null) return undefined
  const name = (prototype.constructor as { name?: unknown } | undefined)?.name
  const what = typeof name === 'string' && name !== '' ? `a ${name}` : 'an instance of a class'
  return `${what}, not plain JSON data; use an object literal, an array, a string or a number`
}

/** The entries of an array or plain object, or why they cannot be read as JSON data. */
function childrenOf(container: object): [string | number, unknown][] | string {
  if (Array.isArray(container)) {
    if (Object.getPrototypeOf(container) !== Array.prototype) {
      return 'an instance of an Array subclass, not plain JSON data; use an array literal'
    }
    const entries: [number, unknown][] = []
    for (let index = 0; index < container.length; index++) {
      if (!(index in container)) return `has a hole at [${index}]; JSON arrays are dense`
      entries.push([index, container[index] as unknown])
    }
    return entries
  }
  const entries: [string, unknown][] = []
  for (const key of Reflect.ownKeys(container)) {
    if (typeof key === 'symbol') return `has a symbol key ${String(key)}; JSON keys are strings`
    if (FORBIDDEN_KEYS.has(key)) {
      return `has the key "${key}", which is refused because it could reach a prototype`
    }
    const descriptor = Object.getOwnPropertyDescriptor(container, key) as PropertyDescriptor
    // A getter runs code on every read, so the value could change between check and use.
    if (descriptor.get !== undefined || descriptor.set !== undefined) {
      return `has a getter or setter at "${key}"; give a plain value instead`
    }
    if (descriptor.enumerable !== true) {
      return `has a hidden (non-enumerable) property "${key}"; JSON would drop it`
    }
    entries.push([key, descriptor.value])
  }
  return entries
}
