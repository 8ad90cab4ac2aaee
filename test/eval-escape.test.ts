/**
 * The eval escape suite: real attempts to get out of js_eval's isolate, across the classes a
 * survey of node:vm escapes found. Each attack runs in a session of its own through the whole
 * tool contract; each asserts that the host was not reached (no `ESCAPED` answer, no mark on
 * the server's `process`) and that the server still answers afterwards. Every attack that
 * targets the engine first runs under node:vm with the same naive capabilities (its positive
 * control), where it does reach the host: so no attack here can pass by never having run.
 */
import assert from 'node:assert/strict'
import util from 'node:util'
import vm from 'node:vm'
import { after, before, describe, it } from 'node:test'
import { z } from 'zod'
import { capabilityFunction, type Capability } from '../src/eval/capability.ts'
import {
  evalValue,
  evalWorkshop,
  type EvalWorkshop,
} from '../src/eval/capabilities/test-eval-workshop.ts'
import type { ToolResult } from '../src/tool/tool-result.ts'

/** What every attack body can use: `escaped(p)` answers ESCAPED for the host's process. */
const HELPER = `const escaped = (p) => {
  if (p && typeof p === 'object' && typeof p.pid === 'number' && typeof p.cwd === 'function') {
    try { p.__eitriEscaped = true } catch {}
    return 'ESCAPED'
  }
  return 'contained'
}`

/* eslint-disable @typescript-eslint/no-implied-eval -- the naive host helpers are sloppy on purpose (as CommonJS libraries are), which only the Function constructor makes in an ES module. */
/** A deep merge as careless host code writes it (the prototype pollution target). */
function naiveMerge(target: Record<string, unknown>, source: unknown): Record<string, unknown> {
  if (typeof source !== 'object' || source === null) return target
  for (const key of Object.keys(source)) {
    const value = (source as Record<string, unknown>)[key]
    if (typeof value === 'object' && value !== null) {
      target[key] ??= {}
      naiveMerge(target[key] as Record<string, unknown>, value)
    } else {
      target[key] = value
    }
  }
  return target
}

/** The host functions both sandboxes offer as `probe`: naive on purpose. */
function hostProbe() {
  const files: Record<string, string> = { 'ok.txt': 'fine', '../secret.txt': 'HOST SECRET' }
  return {
    echo: async (...args: unknown[]) => ({ echoed: args }),
    fail: async () => {
      throw new Error('host failure at /srv/eitri/host.js')
    },
    // Checks the path, then uses it again: a check-then-use race for a guest getter.
    read: async (path: unknown) => {
      if (String(path).includes('..')) throw new Error('refused')
      return files[String(path)] ?? 'missing'
    },
    readInput: async (input: { path: unknown }) => {
      if (String(input.path).includes('..')) throw new Error('refused')
      return files[String(input.path)] ?? 'missing'
    },
    merge: async (source: unknown) => Object.keys(naiveMerge({}, source)).length,
    // Sloppy host helpers, as CommonJS libraries are: they call back into the guest.
    each: new Function(
      'list',
      'fn',
      'for (const item of list) fn.call(undefined, { item }); return list.length',
    ) as (list: unknown[], fn: unknown) => number,
    invoke: new Function('fn', 'return fn()') as (fn: unknown) => unknown,
    // An adapter that resolves a host promise with whatever the value's then gives.
    settle: (value: unknown) =>
      new Promise((resolve) => (value as { then: (next: unknown) => void }).then(resolve)),
    // The host's own Array.prototype.map, as library code calls it on what it is given.
    map: async (list: unknown) => Array.prototype.map.call(list, (item: unknown) => ({ item })),
    source: async function HOST_SOURCE_MARKER() {
      return 'host source with process.env and /srv/eitri paths'
    },
  }
}

/** The same functions as a js_eval capability: whatever crosses is a JSON copy, checked. */
const probeCapability: Capability = {
  name: 'probe',
  purpose: 'Naive host functions, as targets of the escape suite.',
  example: 'await probe.echo(1)',
  functions: [
    capabilityFunction({
      name: 'echo',
      signature: 'echo(...args)',
      description: 'Echoes.',
      parameters: z.tuple([z.unknown()]).rest(z.unknown()),
      run: async (args) => ({ echoed: args }),
    }),
    capabilityFunction({
      name: 'fail',
      signature: 'fail()',
      description: 'Throws.',
      parameters: z.tuple([]),
      run: () => hostProbe().fail(),
    }),
    capabilityFunction({
      name: 'read',
      signature: 'read(path)',
      description: 'Reads.',
      parameters: z.tuple([z.string()]),
      run: ([path]) => hostProbe().read(path),
    }),
    capabilityFunction({
      name: 'readInput',
      signature: 'readInput(input)',
      description: 'Reads.',
      parameters: z.tuple([z.object({ path: z.string() })]),
      run: ([input]) => hostProbe().readInput(input),
    }),
    capabilityFunction({
      name: 'merge',
      signature: 'merge(source)',
      description: 'Merges.',
      parameters: z.tuple([z.unknown()]),
      run: ([source]) => hostProbe().merge(source),
    }),
    capabilityFunction({
      name: 'each',
      signature: 'each(list, fn)',
      description: 'Calls back.',
      parameters: z.tuple([z.array(z.unknown()), z.unknown()]),
      run: async ([list, fn]) => hostProbe().each(list, fn),
    }),
    capabilityFunction({
      name: 'invoke',
      signature: 'invoke(fn)',
      description: 'Calls back.',
      parameters: z.tuple([z.unknown()]),
      run: async ([fn]) => (typeof fn === 'function' ? hostProbe().invoke(fn) : 'not a function'),
    }),
    capabilityFunction({
      name: 'settle',
      signature: 'settle(value)',
      description: 'Awaits.',
      parameters: z.tuple([z.unknown()]),
      run: ([value]) => hostProbe().settle(value),
    }),
    capabilityFunction({
      name: 'map',
      signature: 'map(list)',
      description: 'Maps.',
      parameters: z.tuple([z.array(z.unknown())]),
      run: ([list]) => hostProbe().map(list),
    }),
    capabilityFunction({
      name: 'source',
      signature: 'source()',
      description: 'Answers.',
      parameters: z.tuple([]),
      run: () => hostProbe().source(),
    }),
  ],
}

/** Runs an attack under node:vm with the naive probe, rendering the answer as a REPL would. */
async function underNodeVm(body: string): Promise<string> {
  const context = vm.createContext({
    probe: hostProbe(),
    console: { log: (...values: unknown[]) => util.inspect(values) },
  })
  // A body without await runs synchronously, so what it returns reaches the host as is.
  const wrapper = body.includes('await') ? 'async () =>' : '() =>'
  let value: unknown = vm.runInContext(`(${wrapper} { ${HELPER}\n${body} })()`, context, {
    importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
  })
  if (util.types.isPromise(value)) value = await value
  // The host takes a thenable answer the way promise adapters do.
  const then = (value as { then?: unknown } | null)?.then
  if (typeof then === 'function') {
    value = await new Promise<unknown>((resolve) => {
      then.call(value, resolve)
    })
  }
  return `${String(value)} ${util.inspect(value)}`
}

interface Attack {
  readonly name: string
  readonly body: string
  /** True when the attack targets the engine: it must escape node:vm. */
  readonly control: boolean
  readonly timeoutS?: number
  /** Further checks of the answer (that the attack ran as intended). */
  readonly check?: (result: ToolResult) => void
}

/** The attack ran and got nothing: it answered `contained…`, or failed reaching for the host. */
const contained = (result: ToolResult): void => {
  if (result.type === 'success') {
    assert.match(result.content, /^contained/, result.content)
    return
  }
  assert.equal(result.code, 'eval_error', result.content)
  assert.match(
    result.content,
    // A function or Proxy never crosses: as JSON it is nothing, and the host refuses the call.
    /^(ReferenceError: process is not defined|TypeError: |Error \[(invalid_input|tool_failed)\])/m,
    result.content,
  )
}
const code =
  (...codes: string[]) =>
  (result: ToolResult): void => {
    assert.ok(
      result.type === 'error' && codes.includes(result.code),
      `${codes.join('|')}: ${result.content}`,
    )
  }

const attacks: Attack[] = [
  {
    name: 'global-constructor-chain',
    control: true,
    body: "return escaped(this.constructor.constructor('return process')())",
    check: contained,
  },
  {
    name: 'globalThis-constructor-chain',
    control: true,
    body: "return escaped(globalThis.constructor.constructor('return process')())",
    check: contained,
  },
  {
    name: 'capability-function-constructor',
    control: true,
    body: "return escaped(await probe.echo.constructor('return process')())",
    check: contained,
  },
  {
    name: 'capability-result-constructor',
    control: true,
    body: "const r = await probe.echo(1); return escaped(r.constructor.constructor('return process')())",
    check: contained,
  },
  {
    name: 'capability-result-proto',
    control: true,
    body: "const r = await probe.map([1]); return escaped(r[0].__proto__.constructor.constructor('return process')())",
    check: contained,
  },
  {
    name: 'capability-promise-constructor',
    control: true,
    body: "const p = probe.echo(1); return escaped(p.constructor.constructor('return process')())",
    check: contained,
  },
  {
    name: 'capability-error-constructor',
    control: true,
    body: "try { await probe.fail() } catch (e) { return escaped(e.constructor.constructor('return process')()) + ' ' + e.message }",
    check: (result) => {
      contained(result)
      assert.doesNotMatch(result.content, /\/srv\/eitri/, 'no host path in the rebuilt error')
    },
  },
  {
    name: 'host-error-details',
    control: true,
    body: "try { await probe.fail() } catch (e) { const text = e.message + ' ' + String(e.stack); return text.includes('/srv/eitri') ? 'ESCAPED host path: ' + text : 'contained ' + text }",
    check: (result) => {
      contained(result)
      assert.doesNotMatch(result.content, /\/srv\/eitri|host\.js|node:internal/)
    },
  },
  {
    name: 'arguments-callee-caller',
    control: true,
    body: "let leaked; await probe.each([1], function () { leaked = arguments.callee.caller }); return escaped(leaked && leaked.constructor('return process')())",
    check: contained,
  },
  {
    name: 'callback-arguments',
    control: true,
    body: "let leaked; await probe.each([1], function (item) { leaked = item }); return escaped(leaked && leaked.constructor.constructor('return process')())",
    check: contained,
  },
  {
    name: 'proxy-handed-to-host',
    control: true,
    body: "let leaked; const trap = new Proxy(function () {}, { apply(target, self, args) { leaked = args[0]; return 1 } }); await probe.each([{}], trap); return escaped(leaked && leaked.constructor.constructor('return process')())",
    check: contained,
  },
  {
    name: 'proxy-get-trap-on-host-read',
    control: false,
    body: "let leaked; const input = new Proxy({}, { get(target, key, receiver) { if (key === 'path') return 'ok.txt'; leaked = receiver; return undefined } }); await probe.readInput(input); return escaped(leaked === input ? undefined : leaked)",
    check: contained,
  },
  {
    name: 'thenable-result',
    control: true,
    body: "return { then(resolve) { resolve(escaped(resolve.constructor('return process')())) } }",
    check: contained,
  },
  {
    name: 'thenable-argument',
    control: true,
    body: "let leaked = 'contained: then was never called'; await probe.settle({ then(resolve) { leaked = escaped(resolve.constructor('return process')()); resolve() } }); return leaked",
    check: contained,
  },
  {
    name: 'symbol-species',
    control: true,
    body: "let leaked; class Evil extends Array { static get [Symbol.species]() { return function () { return new Proxy([], { defineProperty(t, k, d) { leaked = d; return Reflect.defineProperty(t, k, d) } }) } } }; const list = Evil.from([1, 2]); await probe.map(list); return escaped(leaked && leaked.constructor.constructor('return process')())",
    check: contained,
  },
  {
    name: 'inspect-hook-on-result',
    control: true,
    body: "return { [Symbol.for('nodejs.util.inspect.custom')](depth, options, inspect) { return escaped(inspect.constructor('return process')()) } }",
    check: (result) => assert.doesNotMatch(result.content, /ESCAPED/),
  },
  {
    name: 'inspect-hook-in-console',
    control: true,
    body: "let out = 'not called'; console.log({ [Symbol.for('nodejs.util.inspect.custom')](depth, options, inspect) { out = escaped(inspect.constructor('return process')()); return out } }); return out",
    check: (result) => assert.doesNotMatch(result.content, /ESCAPED/),
  },
  {
    name: 'function-prototype-call-override',
    control: true,
    body: "let leaked; const call = Function.prototype.call; Function.prototype.call = function (self, ...args) { leaked ??= args[0]; return call.apply(this, [self, ...args]) }; await probe.each([{}], function () {}); Function.prototype.call = call; return escaped(leaked && leaked.constructor.constructor('return process')())",
    check: contained,
  },
  {
    name: 'prepare-stack-trace-call-sites',
    control: true,
    body: "let sites = []; Error.prepareStackTrace = (error, callSites) => { sites = callSites; return 'stack' }; await probe.invoke(() => new Error('probe').stack); Error.prepareStackTrace = undefined; for (const site of sites) { try { const p = site.getFunction()?.constructor('return process')(); if (escaped(p) === 'ESCAPED') return 'ESCAPED' } catch {} } return 'contained ' + sites.length",
    check: contained,
  },
  {
    name: 'prototype-pollution-through-arguments',
    control: true,
    body: "await probe.merge(JSON.parse('{\"__proto__\": {\"eitriPolluted\": \"yes\"}}')); return ({}).eitriPolluted === 'yes' || probe.constructor.constructor('return ({}).eitriPolluted')() === 'yes' ? escaped(probe.constructor.constructor('return process')()) : 'contained'",
    check: code('eval_error'),
  },
  {
    name: 'constructor-prototype-pollution',
    control: false,
    body: "return await probe.merge({ constructor: { prototype: { eitriPolluted: 'yes' } } })",
    check: code('eval_error'),
  },
  {
    name: 'prototype-pollution-through-results',
    control: false,
    body: "const r = JSON.parse(JSON.stringify(await probe.echo(JSON.parse('{\"a\": 1}')))); const o = JSON.parse('{\"__proto__\": {\"eitriPolluted\": 1}}'); Object.assign({}, o); return ({}).eitriPolluted === undefined ? 'contained' : 'polluted its own realm only'",
    check: contained,
  },
  {
    name: 'getter-check-then-use',
    control: true,
    body: "let reads = 0; const input = { get path() { return ++reads === 1 ? 'ok.txt' : '../secret.txt' } }; const text = await probe.readInput(input); return text === 'HOST SECRET' ? 'ESCAPED' : 'contained ' + text",
    check: (result) => assert.match(result.content, /contained fine/),
  },
  {
    name: 'tostring-check-then-use',
    control: true,
    body: "let reads = 0; const path = { toString() { return ++reads === 1 ? 'ok.txt' : '../secret.txt' } }; const text = await probe.read(path).catch((e) => 'refused ' + e.message); return text === 'HOST SECRET' ? 'ESCAPED' : 'contained ' + text",
    check: contained,
  },
  {
    name: 'host-source-via-tostring',
    control: true,
    body: "const text = Function.prototype.toString.call(probe.source) + probe.read.toString(); return text.includes('HOST_SOURCE_MARKER') || text.includes('/srv/eitri') ? 'ESCAPED host source' : 'contained ' + text.slice(0, 80)",
    check: (result) => {
      contained(result)
      assert.doesNotMatch(result.content, /isolated-vm|require|process/)
    },
  },
  {
    name: 'dynamic-import-of-host-modules',
    control: true,
    body: "const m = await import('node:process'); return escaped(m.default)",
    check: code('eval_error'),
  },
  {
    name: 'no-host-globals',
    control: false,
    body: "const names = ['process', 'require', 'module', 'Buffer', 'setTimeout', 'setImmediate', 'queueMicrotask', 'WebAssembly', 'SharedArrayBuffer', 'Atomics', 'FinalizationRegistry', 'ivm', '_ivm', 'Reference', 'ExternalCopy']; const found = names.filter((n) => n in globalThis); const own = Object.getOwnPropertyNames(globalThis).filter((n) => /^(_?ivm|isolated.*|Reference|ExternalCopy|Copy|Callback|Dereference|NativeModule)$/i.test(n)); return found.length + own.length === 0 ? 'contained' : 'found ' + found.concat(own)",
    check: (result) => assert.equal(evalValue(result), 'contained'),
  },
  {
    name: 'eval-and-function-reach-nothing',
    control: false,
    body: "return [(0, eval)('typeof process'), new Function('return typeof require')(), (async function () {}).constructor('return typeof globalThis.process')].slice(0, 2).join() === 'undefined,undefined' ? 'contained' : 'ESCAPED'",
    check: (result) => assert.equal(evalValue(result), 'contained'),
  },
  {
    name: 'webassembly-memory',
    control: false,
    body: "try { new WebAssembly.Memory({ initial: 1, maximum: 65536, shared: true }); return 'ESCAPED memory' } catch (e) { return 'contained ' + e.name }",
    check: contained,
  },
  {
    name: 'deep-recursion',
    control: false,
    body: 'function down(n) { return down(n + 1) + 1 } return down(0)',
    check: (result) => {
      code('eval_error')(result)
      assert.match(result.content, /RangeError: Maximum call stack/)
    },
  },
  {
    name: 'string-bomb',
    control: false,
    timeoutS: 20,
    body: "let s = 'x'; for (;;) s += s",
    check: (result) => {
      code('eval_error', 'memory_limit')(result)
      assert.match(result.content, /Invalid string length|memory/)
    },
  },
  {
    name: 'array-bomb',
    control: false,
    timeoutS: 30,
    body: 'const all = []; for (;;) all.push(new Array(1e6).fill(1))',
    check: code('memory_limit', 'eval_error'),
  },
  {
    name: 'json-parse-nesting-bomb',
    control: false,
    timeoutS: 20,
    body: "const bomb = JSON.parse('['.repeat(200000) + ']'.repeat(200000)); return await probe.echo(bomb)",
    check: code('eval_error'),
  },
  {
    name: 'microtask-loop',
    control: false,
    timeoutS: 1,
    body: 'function again() { Promise.resolve().then(again) } again(); await new Promise(() => {})',
    check: code('timeout'),
  },
  {
    name: 'loop-after-awaited-call',
    control: false,
    timeoutS: 1,
    body: 'await probe.echo(1); for (;;) {}',
    check: code('timeout'),
  },
  {
    name: 'huge-result',
    control: false,
    timeoutS: 20,
    body: "return 'r'.repeat(100_000_000)",
    check: (result) =>
      assert.ok(result.content.length < 100_000, `${result.content.length} characters`),
  },
  {
    name: 'huge-capability-argument',
    control: false,
    timeoutS: 20,
    body: "return await probe.echo('a'.repeat(40_000_000))",
    check: (result) => {
      code('eval_error')(result)
      assert.match(result.content, /over the limit/)
    },
  },
  {
    name: 'capability-call-flood',
    control: false,
    timeoutS: 20,
    body: "const all = await Promise.allSettled(Array.from({ length: 5000 }, () => probe.echo(1))); return all.filter((r) => r.status === 'rejected').length > 0 ? 'contained: flood refused in part' : 'all served'",
    check: contained,
  },
]

describe('js_eval escape suite', () => {
  let fixture: EvalWorkshop
  before(async () => {
    fixture = await evalWorkshop({
      files: { 'ok.txt': 'fine' },
      workshop: { evaluation: { extraCapabilities: [probeCapability], maxSessions: 64 } },
    })
  })
  after(async () => {
    await fixture[Symbol.asyncDispose]()
  })

  it('has at least 30 attacks, the engine ones each with a positive control', () => {
    assert.ok(attacks.length >= 30, `${attacks.length} attacks`)
    assert.ok(attacks.filter((attack) => attack.control).length >= 20)
    assert.equal(new Set(attacks.map((attack) => attack.name)).size, attacks.length)
  })

  for (const attack of attacks) {
    it(attack.name, async () => {
      if (attack.control) {
        const controlled = await underNodeVm(attack.body).catch(
          (error: unknown) => `control threw: ${String(error)}`,
        )
        assert.match(
          controlled,
          /ESCAPED/,
          `the positive control under node:vm must reach the host: ${controlled}`,
        )
        delete (process as { __eitriEscaped?: boolean }).__eitriEscaped
        delete (Object.prototype as { eitriPolluted?: unknown }).eitriPolluted
      }
      const result = await fixture.run(`await (async () => { ${HELPER}\n${attack.body} })()`, {
        session: attack.name,
        timeout_s: attack.timeoutS ?? 10,
      })
      assert.doesNotMatch(result.content, /ESCAPED/, result.content)
      assert.doesNotMatch(result.content, /SyntaxError/, 'the attack must run')
      assert.equal(
        (process as { __eitriEscaped?: boolean }).__eitriEscaped,
        undefined,
        'the server process was reached',
      )
      assert.equal(
        ({} as { eitriPolluted?: unknown }).eitriPolluted,
        undefined,
        'the host prototype was polluted',
      )
      attack.check?.(result)
      const healthy = await fixture.run('6 * 7', { session: 'health-check' })
      assert.equal(evalValue(healthy), '42', 'the server answers afterwards')
    })
  }
})
