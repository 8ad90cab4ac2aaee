/**
 * @module eval/sandbox/guest/render
 * Renders a guest value like a REPL, inside the isolate, within limits of depth, items and
 * characters, so nothing unbounded is ever copied out. It reads properties through their
 * descriptors (a getter shows as `[Getter]`, it never runs), ignores inspect hooks, and uses
 * built-ins captured before any guest code ran, so a guest that rewrites `Array.prototype` or
 * `Function.prototype.call` changes nothing here. Whatever a Proxy's traps do runs in the guest,
 * under the eval's deadline.
 *
 * This function's source is what runs in the isolate: it must not refer to anything outside
 * itself.
 */

/* eslint-disable @typescript-eslint/unbound-method -- built-ins are captured unbound and called through a bound Function.prototype.call, so guest code that replaces them later changes nothing here. */
/** Limits of one rendering. */
export interface RenderLimits {
  /** Characters of the whole rendering. */
  readonly maxChars: number
  /** Nesting shown before `[Object]`. */
  readonly maxDepth: number
  /** Entries shown per array, object, map or set. */
  readonly maxItems: number
  /** Characters of one nested string. */
  readonly maxStringChars: number
}

/** Renders one value; `top` renders a string as is instead of quoted. */
export type Render = (value: unknown, top: boolean) => string

/** Builds a renderer from the built-ins as they are now. */
export function createRenderer(limits: RenderLimits): Render {
  'use strict'
  const call = Function.prototype.call
  const uncurry = <Args extends unknown[], Result>(
    method: (...args: Args) => Result,
  ): ((self: unknown, ...args: Args) => Result) => call.bind(method as never)
  const getter = (prototype: object, key: PropertyKey): ((self: unknown) => unknown) =>
    uncurry(Reflect.getOwnPropertyDescriptor(prototype, key)?.get as () => unknown)
  const describe = Reflect.getOwnPropertyDescriptor
  const ownKeys = Reflect.ownKeys
  const prototypeOf = Reflect.getPrototypeOf
  const isArray = Array.isArray
  const stringify = JSON.stringify
  const slice = uncurry(String.prototype.slice)
  const join = uncurry(Array.prototype.join)
  const push = uncurry(Array.prototype.push)
  const functionSource = uncurry(Function.prototype.toString)
  const repeat = uncurry(String.prototype.repeat)
  const includes = uncurry(Array.prototype.includes)
  const exec = uncurry(RegExp.prototype.exec)
  const is = Object.is
  const IDENTIFIER = /^[A-Za-z_$][\w$]*$/
  const INDEX = /^\d+$/
  const symbolText = uncurry(Symbol.prototype.toString)
  const mapSize = getter(Map.prototype, 'size')
  const mapEntries = uncurry(Map.prototype.entries)
  const setSize = getter(Set.prototype, 'size')
  const setValues = uncurry(Set.prototype.values)
  const iteratorNext = uncurry(
    (prototypeOf(new Map().entries()) as { next: () => IteratorResult<unknown> }).next,
  )
  const setIteratorNext = uncurry(
    (prototypeOf(new Set().values()) as { next: () => IteratorResult<unknown> }).next,
  )
  const dateTime = uncurry(Date.prototype.getTime)
  const dateIso = uncurry(Date.prototype.toISOString)
  const regexpSource = getter(RegExp.prototype, 'source')
  const regexpFlags = getter(RegExp.prototype, 'flags')
  const typedArrayPrototype = prototypeOf(Uint8Array.prototype) as object
  const typedArrayTag = getter(typedArrayPrototype, Symbol.toStringTag)
  const typedArrayLength = getter(typedArrayPrototype, 'length')
  const arrayBufferLength = getter(ArrayBuffer.prototype, 'byteLength')
  const errorPrototype = Error.prototype
  const asyncFunctionPrototype = prototypeOf(async () => undefined)
  const generatorFunctionPrototype = prototypeOf(function* () {
    yield undefined
  })
  const seen: unknown[] = []
  let budget = 0

  const take = (text: string): string => {
    budget -= text.length
    return text
  }
  const quote = (text: string): string => {
    const shown = text.length > limits.maxStringChars ? slice(text, 0, limits.maxStringChars) : text
    const more =
      text.length > shown.length ? `… (${text.length - shown.length} more characters)` : ''
    return `${stringify(shown)}${more}`
  }
  const dataValue = (target: object, key: PropertyKey): { value: unknown } | string => {
    const descriptor = describe(target, key)
    if (descriptor === undefined) return { value: undefined }
    if ('value' in descriptor) return { value: descriptor.value as unknown }
    if (descriptor.get !== undefined && descriptor.set !== undefined) return '[Getter/Setter]'
    return descriptor.get !== undefined ? '[Getter]' : '[Setter]'
  }
  const keyText = (key: string | symbol): string =>
    typeof key === 'symbol'
      ? `[${symbolText(key)}]`
      : exec(IDENTIFIER, key) !== null
        ? key
        : stringify(key)
  const className = (value: object): string => {
    let prototype: object | null
    try {
      prototype = prototypeOf(value)
    } catch {
      return 'Object'
    }
    if (prototype === null) return '[Object: null prototype]'
    const constructor = describe(prototype, 'constructor')?.value as unknown
    if (typeof constructor !== 'function') return 'Object'
    const name = describe(constructor, 'name')?.value as unknown
    return typeof name === 'string' && name !== '' ? name : 'Object'
  }
  const functionText = (value: (...args: never[]) => unknown): string => {
    const name = describe(value, 'name')?.value as unknown
    const named = typeof name === 'string' && name !== '' ? name : ''
    let source: string
    try {
      source = functionSource(value)
    } catch {
      source = ''
    }
    if (slice(source, 0, 5) === 'class') return `[class ${named === '' ? '(anonymous)' : named}]`
    const prototype = prototypeOf(value)
    const kind =
      prototype === asyncFunctionPrototype
        ? 'AsyncFunction'
        : prototype === generatorFunctionPrototype
          ? 'GeneratorFunction'
          : 'Function'
    return `[${kind}: ${named === '' ? '(anonymous)' : named}]`
  }
  const wrap = (open: string, parts: string[], close: string, depth: number): string => {
    if (parts.length === 0) return `${open}${close}`
    const line = `${open} ${join(parts, ', ')} ${close}`
    if (line.length <= 72) return line
    const indent = repeat('  ', depth + 1)
    return `${open}\n${indent}${join(parts, `,\n${indent}`)}\n${repeat('  ', depth)}${close}`
  }
  const entriesOf = (
    value: object,
    depth: number,
    parts: string[],
    skip: (key: string | symbol) => boolean,
  ): void => {
    const keys = ownKeys(value)
    let shown = 0
    for (let index = 0; index < keys.length; index++) {
      const key = keys[index] as string | symbol
      if (skip(key)) continue
      const descriptor = describe(value, key)
      if (descriptor === undefined || descriptor.enumerable !== true) continue
      if (shown >= limits.maxItems || budget <= 0) {
        push(parts, '…')
        return
      }
      shown++
      const data = dataValue(value, key)
      push(
        parts,
        `${keyText(key)}: ${typeof data === 'string' ? data : format(data.value, depth + 1)}`,
      )
    }
  }
  const collection = (value: object, depth: number): string | undefined => {
    try {
      const size = mapSize(value) as number
      const parts: string[] = []
      const iterator = mapEntries(value)
      for (let step = iteratorNext(iterator); step.done !== true; step = iteratorNext(iterator)) {
        if (parts.length >= limits.maxItems || budget <= 0) {
          push(parts, '…')
          break
        }
        const pair = step.value as [unknown, unknown]
        push(parts, `${format(pair[0], depth + 1)} => ${format(pair[1], depth + 1)}`)
      }
      return wrap(`Map(${size}) {`, parts, '}', depth)
    } catch {
      // not a Map
    }
    try {
      const size = setSize(value) as number
      const parts: string[] = []
      const iterator = setValues(value)
      for (
        let step = setIteratorNext(iterator);
        step.done !== true;
        step = setIteratorNext(iterator)
      ) {
        if (parts.length >= limits.maxItems || budget <= 0) {
          push(parts, '…')
          break
        }
        push(parts, format(step.value, depth + 1))
      }
      return wrap(`Set(${size}) {`, parts, '}', depth)
    } catch {
      return undefined
    }
  }
  const special = (value: object, depth: number): string | undefined => {
    try {
      const time = dateTime(value)
      return time === time ? dateIso(value) : 'Invalid Date'
    } catch {
      // not a Date
    }
    try {
      return `/${regexpSource(value) as string}/${regexpFlags(value) as string}`
    } catch {
      // not a RegExp
    }
    const tag = typedArrayTag(value)
    if (typeof tag === 'string') {
      const length = typedArrayLength(value) as number
      const parts: string[] = []
      for (let index = 0; index < length; index++) {
        if (index >= limits.maxItems || budget <= 0) {
          push(parts, `… ${length - index} more items`)
          break
        }
        push(parts, format((value as Record<number, unknown>)[index], depth + 1))
      }
      return wrap(`${tag}(${length}) [`, parts, ']', depth)
    }
    try {
      return `ArrayBuffer { byteLength: ${arrayBufferLength(value) as number} }`
    } catch {
      // not an ArrayBuffer
    }
    return collection(value, depth)
  }
  const errorText = (value: object): string | undefined => {
    let prototype: object | null = value
    for (let hops = 0; prototype !== null && hops < 100; hops++) {
      if (prototype === errorPrototype) break
      prototype = prototypeOf(prototype)
    }
    if (prototype !== errorPrototype) return undefined
    const stack = dataValue(value, 'stack')
    if (typeof stack !== 'string' && typeof stack.value === 'string') return stack.value
    const name = dataValue(prototypeOf(value) ?? value, 'name')
    const message = dataValue(value, 'message')
    return `${typeof name !== 'string' && typeof name.value === 'string' ? name.value : 'Error'}: ${typeof message !== 'string' && typeof message.value === 'string' ? message.value : ''}`
  }
  function format(value: unknown, depth: number): string {
    if (budget <= 0) return '…'
    switch (typeof value) {
      case 'string':
        return take(quote(value))
      case 'number':
        return take(is(value, -0) ? '-0' : `${value}`)
      case 'bigint':
        return take(`${value}n`)
      case 'boolean':
      case 'undefined':
        return take(`${value}`)
      case 'symbol':
        return take(symbolText(value))
      case 'function':
        return take(functionText(value as (...args: never[]) => unknown))
      case 'object':
        break
    }
    if (value === null) return take('null')
    if (includes(seen, value)) return take('[Circular]')
    const error = errorText(value)
    if (error !== undefined) return take(depth === 0 ? error : `[${slice(error, 0, 200)}]`)
    if (depth > limits.maxDepth) return take(isArray(value) ? '[Array]' : `[${className(value)}]`)
    push(seen, value)
    try {
      const shown = special(value, depth)
      if (shown !== undefined) return take(shown)
      const parts: string[] = []
      if (isArray(value)) {
        const length = value.length
        for (let index = 0; index < length; index++) {
          if (index >= limits.maxItems || budget <= 0) {
            push(parts, `… ${length - index} more items`)
            break
          }
          const data = dataValue(value, `${index}`)
          push(parts, typeof data === 'string' ? data : format(data.value, depth + 1))
        }
        entriesOf(
          value,
          depth,
          parts,
          (key) => typeof key === 'string' && (key === 'length' || exec(INDEX, key) !== null),
        )
        return take(wrap('[', parts, ']', depth))
      }
      entriesOf(value, depth, parts, () => false)
      const name = className(value)
      return take(wrap(name === 'Object' ? '{' : `${name} {`, parts, '}', depth))
    } finally {
      seen.length = seen.length - 1
    }
  }
  return (value, top) => {
    budget = limits.maxChars
    seen.length = 0
    let text: string
    try {
      text = top && typeof value === 'string' ? value : format(value, 0)
    } catch (error) {
      text = `[value could not be rendered: ${typeof error === 'object' && error !== null && typeof (describe(error, 'message')?.value as unknown) === 'string' ? (describe(error, 'message')?.value as string) : 'unknown error'}]`
    }
    return text.length > limits.maxChars
      ? `${slice(text, 0, limits.maxChars)}\n… [truncated: ${text.length - limits.maxChars} more characters]`
      : text
  }
}
