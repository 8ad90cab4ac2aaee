import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { describe, it } from 'node:test'
import { EitriError } from '../errors/eitri-error.ts'
import { contextWith } from '../tool/test-context.ts'
import { confine } from './confine.ts'
import type { ConfinedCall } from './confined-function.ts'
import type { Executor } from './executors/executor.ts'
import { timeoutMessage } from './sandbox-messages.ts'
import { call, identity, inline, sandboxOf } from './test-confine.ts'

describe('confine', () => {
  describe('results', () => {
    it('answers a string as is, nothing as empty, anything else as compact JSON', async () => {
      const answers: [unknown, string][] = [
        ['plain text', 'plain text'],
        [null, ''],
        [undefined, ''],
        [{ a: [1, 2], b: 'x' }, '{"a":[1,2],"b":"x"}'],
        [42, '42'],
      ]
      for (const [answer, content] of answers) {
        const tool = confine(() => answer, { ...identity, executor: inline })
        const result = await call(tool)
        assert.equal(result.type, 'success')
        assert.equal(result.content, content)
      }
    })

    it('cuts a result over maxBytes and marks it, counting the bytes before the cut', async () => {
      const tool = confine(() => 'é'.repeat(10), { ...identity, maxBytes: 5, executor: inline })
      const result = await call(tool)
      assert.equal(result.content, 'éé ...[truncated to 5 bytes]')
      assert.equal(sandboxOf(result).bytes, 20)
      const exact = confine(() => 'abcde', { ...identity, maxBytes: 5, executor: inline })
      assert.equal((await call(exact)).content, 'abcde')
    })

    it('carries metadata.sandbox on every result', async () => {
      const tool = confine(() => 'ok', { ...identity, mode: 'tempdir', executor: inline })
      const sandbox = sandboxOf(await call(tool))
      assert.deepEqual(Object.keys(sandbox).sort(), [
        'bytes',
        'durationMs',
        'inputHashes',
        'mode',
        'outputHashes',
        'status',
        'violations',
      ])
      assert.equal(sandbox.mode, 'tempdir')
      assert.equal(sandbox.status, 'ok')
      assert.equal(sandbox.bytes, 2)
      assert.deepEqual(sandbox.violations, [])
      assert.equal(typeof sandbox.durationMs, 'number')
    })
  })

  describe('timeouts and failures', () => {
    it('reports a timeout, not throws, with the exact message', async () => {
      const tool = confine(() => new Promise(() => undefined), {
        ...identity,
        timeoutMs: 200,
        executor: inline,
      })
      const result = await call(tool)
      assert.deepEqual([result.type, result.type === 'error' && result.code], ['error', 'timeout'])
      assert.equal(result.content, "TIMEOUT: tool 'probe' exceeded the 0.2 s sandbox limit.")
      assert.equal(sandboxOf(result).status, 'timeout')
    })

    it('formats the limit in seconds without needless decimals', () => {
      for (const [timeoutMs, shown] of [
        [30_000, '30'],
        [1500, '1.5'],
        [250, '0.25'],
        [1234, '1.234'],
      ] as const) {
        assert.equal(
          timeoutMessage('probe', timeoutMs),
          `TIMEOUT: tool 'probe' exceeded the ${shown} s sandbox limit.`,
        )
      }
    })

    it('reports a failing function as tool_failed with its message', async () => {
      const tool = confine(
        () => {
          throw new Error('no luck')
        },
        { ...identity, executor: inline },
      )
      const result = await call(tool)
      assert.equal(result.type === 'error' && result.code, 'tool_failed')
      assert.equal(result.content, "ERROR: tool 'probe' failed in the sandbox: no luck")
      assert.equal(sandboxOf(result).status, 'error')
    })

    it('keeps the code of an executor’s own EitriError, such as jail_unavailable', async () => {
      const broken: Executor = {
        name: 'broken',
        outOfProcess: false,
        allowsInheritedEnvironment: false,
        run: () => Promise.reject(new EitriError('jail_unavailable', 'bwrap is missing')),
      }
      const result = await call(confine(() => 'x', { ...identity, executor: broken }))
      assert.equal(result.type === 'error' && result.code, 'jail_unavailable')
      assert.equal(result.content, "ERROR: tool 'probe' failed in the sandbox: bwrap is missing")
    })

    it('answers cancelled when the call’s signal aborts', async () => {
      const controller = new AbortController()
      const tool = confine(() => new Promise(() => undefined), { ...identity, executor: inline })
      const pending = tool.execute({}, contextWith(controller.signal))
      setTimeout(() => controller.abort(), 50)
      const result = await pending
      assert.equal(result.type === 'error' && result.code, 'cancelled')
      assert.ok(sandboxOf(result))
    })

    it('removes the scratch folder after every call, even a timeout or a failure', async () => {
      const seen: string[] = []
      const remember = (call: ConfinedCall) => seen.push(call.workdir)
      const tools = [
        confine((_input, c: ConfinedCall) => remember(c), { ...identity, executor: inline }),
        confine(
          (_input, c: ConfinedCall) => {
            remember(c)
            throw new Error('x')
          },
          { ...identity, executor: inline },
        ),
        confine(
          (_input, c: ConfinedCall) => {
            remember(c)
            return new Promise(() => undefined)
          },
          { ...identity, timeoutMs: 50, executor: inline },
        ),
      ]
      for (const tool of tools) await call(tool)
      assert.equal(seen.length, 3)
      assert.equal(new Set(seen).size, 3, 'a fresh folder per call')
      assert.deepEqual(
        seen.filter((workdir) => existsSync(workdir)),
        [],
      )
    })
  })
})
