import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { parseAgentDef } from './agent-def.ts'
import { DETERMINISTIC_PROGRAMS } from './deterministic-programs.ts'
import type { ProgramContext } from './program.ts'

function run(program: unknown, task: unknown, signal = new AbortController().signal) {
  const def = parseAgentDef({ id: 'a', program })
  const factory = DETERMINISTIC_PROGRAMS[def.program.kind]
  assert.ok(factory)
  return factory(def, {
    request: { task, settlement: 'automatic', parentRun: undefined, limits: {} },
    parentRun: undefined,
  }).run({ task, signal } as ProgramContext)
}

describe('deterministic programs', () => {
  it('echo answers its task; scripted its result, else its reply', async () => {
    assert.deepEqual(await run({ kind: 'echo' }, { a: 1 }), {
      status: 'completed',
      value: { a: 1 },
      output: '{"a":1}',
    })
    assert.deepEqual(await run({ kind: 'scripted', reply: 'hi' }, 'x'), {
      status: 'completed',
      value: 'hi',
      output: 'hi',
    })
    assert.deepEqual(await run({ kind: 'scripted', reply: 'hi', result: [1] }, 'x'), {
      status: 'completed',
      value: [1],
      output: 'hi',
    })
    assert.deepEqual(await run({ kind: 'scripted', reply: 'hi', fail: 'no luck' }, 'x'), {
      status: 'failed',
      error: 'no luck',
    })
    assert.throws(() => parseAgentDef({ id: 'a', program: { kind: 'scripted', fail: 1 } }), {
      message: /program\.fail: must be a string \(the error the Run fails with\)/,
    })
  })

  it('stops at once when cancelled during its delay', async () => {
    for (const program of [
      { kind: 'echo', delayMs: 600_000 },
      { kind: 'scripted', delayMs: 600_000 },
    ]) {
      const controller = new AbortController()
      const started = Date.now()
      const running = run(program, 'x', controller.signal)
      setTimeout(() => controller.abort(), 20)
      await assert.rejects(running, { code: 'cancelled' })
      assert.ok(Date.now() - started < 1000)
    }
    const aborted = AbortSignal.abort()
    await assert.rejects(run({ kind: 'echo' }, 'x', aborted), { code: 'cancelled' })
  })
})
