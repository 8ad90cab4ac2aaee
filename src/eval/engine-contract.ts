/**
 * @module eval/engine-contract
 * The contract every eval engine keeps, as one suite run against each (isolated-vm today; a
 * QuickJS-in-a-worker engine would have to pass it too): values and REPL rendering,
 * definitions that persist and may be declared again, TypeScript, top-level await, console
 * output, guest errors with guest frames only, capability calls that cross as JSON, the
 * deadline counted after awaited calls, cancellation, memory limits that reset one session
 * only, and nothing of the host reachable.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { CapabilityHandler, EngineSession, EvalEngine } from './eval-engine.ts'
import type { EvalOutcome } from './eval-outcome.ts'

const NAMESPACES = { probe: ['echo', 'wait', 'fail'] }

/** Echoes, waits or fails, as the contract's capability. */
export const probeCapabilities: CapabilityHandler = async (_namespace, name, args, signal) => {
  if (name === 'echo') return { echoed: args }
  if (name === 'wait') {
    await new Promise((resolve) => {
      const timer = setTimeout(resolve, Number(args[0] ?? 10))
      signal.addEventListener('abort', () => clearTimeout(timer), { once: true })
    })
    return 'waited'
  }
  throw Object.assign(new Error('/host/secret/path exploded'), { stack: 'at host.js:1:1' })
}

/** The value of a successful outcome, or a failure of the test naming what came instead. */
export function valueOf(outcome: EvalOutcome): string {
  assert.equal(outcome.type, 'value', JSON.stringify(outcome))
  return outcome.type === 'value' ? outcome.value : ''
}

/** The code of a failed outcome. */
export function failureOf(outcome: EvalOutcome): string {
  assert.equal(outcome.type, 'error', JSON.stringify(outcome))
  return outcome.type === 'error' ? outcome.code : ''
}

/** Registers the contract suite for the engine `makeEngine` answers. */
export function engineContract(label: string, makeEngine: () => EvalEngine): void {
  void describe(`eval engine contract: ${label}`, () => {
    let engine: EvalEngine
    let session: EngineSession
    const run = (code: string, timeoutMs = 10_000, target: EngineSession = session) =>
      target.eval(code, { timeoutMs, capabilities: probeCapabilities })
    const open = () => engine.createSession({ memoryLimitMb: 64, namespaces: NAMESPACES })

    before(async () => {
      engine = makeEngine()
      session = await open()
    })
    after(async () => {
      await engine.close()
    })

    void it('answers the last expression: strings raw, other values rendered like a REPL', async () => {
      assert.equal(valueOf(await run('1 + 1')), '2')
      assert.equal(valueOf(await run("'raw text'")), 'raw text')
      assert.equal(
        valueOf(await run('({ a: 1, b: [1, "x"], c: { d: null } })')),
        '{ a: 1, b: [ 1, "x" ], c: { d: null } }',
      )
      assert.equal(valueOf(await run('new Map([[1, 2]])')), 'Map(1) { 1 => 2 }')
      assert.equal(
        valueOf(await run('const circle = { name: "c" }; circle.self = circle; circle')),
        '{ name: "c", self: [Circular] }',
      )
      assert.equal(valueOf(await run('let nothing')), 'undefined')
      const outcome = await run('42')
      assert.equal(outcome.type === 'value' && outcome.valueType, 'number')
    })

    void it('keeps definitions between evals and lets any top-level declaration be declared again', async () => {
      await run('const x = 1')
      assert.equal(valueOf(await run('x + 1')), '2')
      await run('const x = 10')
      assert.equal(valueOf(await run('x')), '10')
      await run('let y = 1; class K { v() { return 1 } }; function f() { return "f1" }')
      await run('let y = 2; class K { v() { return 2 } }; function f() { return "f2" }')
      assert.equal(valueOf(await run('[y, new K().v(), f()].join()')), '2,2,f2')
      await run('const { a, b: [c] } = { a: 1, b: [2] }')
      assert.equal(valueOf(await run('a + c')), '3')
      assert.equal(valueOf(await run('g(); function g() { return "hoisted" }')), 'hoisted')
    })

    void it('keeps sessions apart', async () => {
      await using other = await open()
      await run('const onlyHere = 1')
      const outcome = await run('typeof onlyHere', 10_000, other)
      assert.equal(valueOf(outcome), 'undefined')
    })

    void it('takes TypeScript (types stripped, never checked) and top-level await', async () => {
      assert.equal(
        valueOf(await run('const n: number = 2\ninterface P { x: string }\nn * 21')),
        '42',
      )
      assert.equal(valueOf(await run('const wrong: string = 5\nwrong')), '5')
      assert.equal(valueOf(await run('await Promise.resolve(7)')), '7')
      assert.equal(
        valueOf(await run('const p = 1, q = 2, r = 3\np < (q) > r')),
        'false',
        'valid JavaScript keeps its meaning',
      )
    })

    void it('shows console output, then the value', async () => {
      const outcome = await run('console.log("one", { two: 2 }); console.error("three"); "value"')
      assert.equal(outcome.type === 'value' && outcome.output, 'one { two: 2 }\n[error] three\n')
      assert.equal(valueOf(outcome), 'value')
    })

    void it('answers a guest exception as eval_error with the message and guest frames only', async () => {
      const outcome = await run(
        'function inner() { throw new TypeError("boom") }\nfunction outer() { inner() }\nouter()',
      )
      assert.equal(failureOf(outcome), 'eval_error')
      assert.equal(outcome.type === 'error' && outcome.message, 'TypeError: boom')
      assert.equal(
        outcome.type === 'error' && outcome.stack,
        '    at inner (<eval>:1:26)\n    at outer (<eval>:2:20)\n    at <eval>:3:1',
      )
      assert.equal(outcome.type === 'error' && outcome.stateKept, true)
      assert.equal(failureOf(await run('throw 42')), 'eval_error')
      const syntax = await run('1 +')
      assert.match(
        outcome.type === 'error' && syntax.type === 'error' ? syntax.message : '',
        /^SyntaxError: .*line 1/,
      )
    })

    void it('calls capabilities with JSON copies and rebuilds their errors inside with a safe message', async () => {
      assert.equal(
        valueOf(await run('const r = await probe.echo("a", { b: [1] }); r.echoed[1].b[0]')),
        '1',
      )
      const failed = await run(
        'try { await probe.fail() } catch (e) { [e instanceof Error, e.code, e.message, String(e.stack).includes("host.js")].join("|") }',
      )
      assert.equal(valueOf(failed), 'true|tool_failed|probe.fail failed.|false')
      assert.equal(failureOf(await run('probe.echo(1n)')), 'eval_error')
    })

    void it('stops an eval at its deadline, even code that runs after an awaited capability call', async () => {
      await run('const before = "kept"')
      for (const code of [
        'while (true) {}',
        'await probe.wait(5); while (true) {}',
        'await probe.wait(60000)',
      ]) {
        const started = performance.now()
        const outcome = await run(code, 300)
        assert.equal(failureOf(outcome), 'timeout', code)
        // Loosely (2 cores, other tests running): the answer comes near the deadline.
        assert.ok(performance.now() - started < 5_300, code)
      }
      const after = engine.capabilities.keepsStateOnTimeout ? 'kept' : 'undefined'
      assert.equal(valueOf(await run('typeof before === "string" ? before : "undefined"')), after)
    })

    void it('answers a cancel as cancelled and says whether the definitions survived', async () => {
      await using target = await open()
      await run('const mine = 1', 10_000, target)
      const waiting = new AbortController()
      const pending = target.eval('await probe.wait(60000)', {
        timeoutMs: 30_000,
        signal: waiting.signal,
        capabilities: probeCapabilities,
      })
      setTimeout(() => waiting.abort(), 100)
      const outcome = await pending
      assert.equal(failureOf(outcome), 'cancelled')
      assert.equal(
        outcome.type === 'error' && outcome.stateKept,
        true,
        'waiting on a capability keeps the state',
      )
      assert.equal(valueOf(await run('mine', 10_000, target)), '1')
      const computing = new AbortController()
      const busy = target.eval('while (true) {}', { timeoutMs: 30_000, signal: computing.signal })
      let abortedAt = 0
      setTimeout(() => {
        abortedAt = performance.now()
        computing.abort()
      }, 100)
      const stopped = await busy
      assert.ok(performance.now() - abortedAt < 5_000, 'a cancel answers within a second (loosely)')
      assert.equal(failureOf(stopped), 'cancelled')
      assert.equal(
        stopped.type === 'error' && stopped.stateKept,
        engine.capabilities.keepsStateOnCancel,
      )
    })

    void it('resets only the session that goes over its memory limit', async () => {
      await using hungry = await open()
      await run('const survivor = "still here"')
      const outcome = await run(
        'const hoard = []; while (true) hoard.push({ n: hoard.length, s: "x" + hoard.length })',
        30_000,
        hungry,
      )
      assert.equal(failureOf(outcome), 'memory_limit')
      assert.equal(outcome.type === 'error' && outcome.stateKept, false)
      assert.notEqual(hungry.lost, undefined)
      assert.equal(valueOf(await run('survivor')), 'still here')
    })

    void it('keeps other sessions working while one runs away', async () => {
      await using runaway = await open()
      const spinning = run('while (true) {}', 3_000, runaway)
      assert.equal(valueOf(await run('"meanwhile"')), 'meanwhile')
      assert.equal(failureOf(await spinning), 'timeout')
    })

    void it('offers nothing of the host and removes what escapes the limits', async () => {
      const globals = await run(
        '["process", "require", "module", "setTimeout", "setInterval", "WebAssembly", "SharedArrayBuffer", "Atomics", "FinalizationRegistry", "Buffer"].filter((name) => typeof globalThis[name] !== "undefined").join()',
      )
      assert.equal(valueOf(globals), '')
      assert.equal(failureOf(await run('await import("node:fs")')), 'eval_error')
    })

    void it('bounds the value and the output inside the isolate', async () => {
      const big = valueOf(await run('"x".repeat(10_000_000)'))
      assert.ok(big.length < 100_000, `value of ${big.length} characters`)
      const loud = await run('for (let i = 0; i < 100000; i++) console.log("line " + i); 1')
      assert.ok(loud.type === 'value' && loud.output.length < 100_000)
      assert.match(loud.type === 'value' ? loud.output : '', /console output truncated/)
    })
  })
}
