import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { z } from 'zod'
import { EitriError } from '../errors/eitri-error.ts'
import { defineTool } from '../tool/define-tool.ts'
import { toolError, toolSuccess } from '../tool/tool-result.ts'
import { confine } from './confine.ts'
import { FIXTURES } from './executors/executor-contract.ts'
import { jailExecutor, type ConfiningJail } from './executors/jail-executor.ts'
import { processExecutor } from './executors/process-executor.ts'
import { call, identity, inline } from './test-confine.ts'

describe('confine', () => {
  describe('definition', () => {
    it('refuses container mode without an executor, when the tool is defined', () => {
      assert.throws(
        () => confine(() => 'x', { ...identity, mode: 'container' }),
        (error: unknown) =>
          EitriError.isInstance(error) &&
          error.code === 'invalid_definition' &&
          /container mode needs an explicit executor/.test(error.message),
      )
      assert.doesNotThrow(() =>
        confine(() => 'x', { ...identity, mode: 'container', executor: inline }),
      )
    })

    it('refuses a closure with an out-of-process executor, when the tool is defined, saying why', () => {
      const reason =
        /a closure cannot be loaded in another process: export it from a module and pass \{ module, export \}/
      for (const options of [{}, { executor: processExecutor() }]) {
        assert.throws(
          () => confine(() => 'x', { ...identity, ...options }),
          (error: unknown) =>
            EitriError.isInstance(error) &&
            error.code === 'invalid_definition' &&
            reason.test(error.message),
        )
      }
      const ordinary = defineTool({ ...identity, execute: async () => toolSuccess('x') })
      assert.throws(() => confine(ordinary), reason)
      assert.doesNotThrow(() => confine({ module: FIXTURES, export: 'echo' }, identity))
    })

    it('refuses a module that is not a file URL or absolute path, or does not exist', () => {
      assert.throws(
        () => confine({ module: './relative.ts', export: 'x' }, identity),
        /file: URL .* or an absolute path/,
      )
      assert.throws(
        () => confine({ module: '/nonexistent/module.ts', export: 'x' }, identity),
        /does not exist/,
      )
    })

    it('refuses wrong options', () => {
      for (const [options, message] of [
        [{ timeoutMs: 0 }, /timeoutMs/],
        [{ maxBytes: 1.5 }, /maxBytes/],
        [{ allowPaths: ['relative/path'] }, /allowPaths must be absolute/],
        [{ mode: 'open' }, /mode must be one of/],
        [{ env: 'all' }, /env must be/],
      ] as const) {
        assert.throws(
          () => confine(() => 'x', { ...identity, executor: inline, ...options } as never),
          message,
        )
      }
    })

    it('refuses env inherit with the jail, which never lets the host environment in', () => {
      const jail: ConfiningJail = {
        identity: { uid: 1000, gid: 1000, dropped: false },
        run: () => Promise.reject(new Error('not reached')),
      }
      assert.throws(
        () =>
          confine(
            { module: FIXTURES, export: 'echo' },
            {
              ...identity,
              env: 'inherit',
              executor: jailExecutor(jail),
            },
          ),
        /never passes the parent's environment in/,
      )
    })

    it('declares governance per mode, frozen with the tool', () => {
      const readOnly = confine(() => 'x', { ...identity, executor: inline })
      assert.deepEqual(readOnly.governance, {
        sideEffects: 'read',
        timeoutMs: 30_000,
        maxBytes: 1_000_000,
        sandbox: { mode: 'read-only', allowPaths: [] },
      })
      const tempdir = confine(() => 'x', {
        ...identity,
        mode: 'tempdir',
        timeoutMs: 5000,
        maxBytes: 10,
        allowPaths: ['/srv/out'],
        executor: inline,
      })
      assert.deepEqual(tempdir.governance, {
        sideEffects: 'write',
        timeoutMs: 5000,
        maxBytes: 10,
        sandbox: { mode: 'tempdir', allowPaths: ['/srv/out'] },
      })
      const container = confine(() => 'x', { ...identity, mode: 'container', executor: inline })
      assert.equal(container.governance?.sideEffects, 'write')
      assert.equal(Object.isFrozen(tempdir), true)
      assert.equal(Object.isFrozen(tempdir.governance?.sandbox.allowPaths), true)
    })

    it('re-confining a tool keeps its name, description and schema, and replaces its sandbox', async () => {
      const ordinary = defineTool({
        name: 'shout',
        description: 'Says it louder.',
        parameters: z.object({ text: z.string() }),
        execute: async ({ text }) => toolSuccess(`${text.toUpperCase()}!`),
      })
      const confined = confine(ordinary, { executor: inline, maxBytes: 3 })
      assert.equal(confined.name, 'shout')
      assert.equal(confined.description, 'Says it louder.')
      assert.equal(confined.parameters, ordinary.parameters)
      assert.deepEqual(confined.inputSchema, ordinary.inputSchema)
      assert.equal((await call(confined, { text: 'hey' })).content, 'HEY ...[truncated to 3 bytes]')
      const again = confine(confined, { executor: inline, mode: 'tempdir' })
      assert.equal(again.name, 'shout')
      assert.deepEqual(again.inputSchema, ordinary.inputSchema)
      assert.equal(again.governance?.sandbox.mode, 'tempdir')
      assert.equal(
        (await call(again, { text: 'hey' })).content,
        'HEY!',
        'not nested in the old cap',
      )
      const invalid = await call(again, { text: 3 })
      assert.equal(invalid.type === 'error' && invalid.code, 'invalid_input')
    })

    it('re-confines a tool’s error result as a failure', async () => {
      const refusing = defineTool({
        name: 'refusing',
        description: 'Always refuses.',
        parameters: z.object({}),
        execute: async () => toolError('not_found', 'nothing here'),
      })
      const result = await call(confine(refusing, { executor: inline }))
      assert.equal(result.type === 'error' && result.code, 'tool_failed')
      assert.equal(result.content, "ERROR: tool 'refusing' failed in the sandbox: nothing here")
    })
  })
})
