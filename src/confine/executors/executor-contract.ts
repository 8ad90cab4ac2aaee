/**
 * @module confine/executors/executor-contract
 * The contract every executor keeps, as one test suite run against each: answers, failures,
 * writes found without the function's word, deadlines and cancellation reported, not thrown.
 */
import assert from 'node:assert/strict'
import { createHash } from 'node:crypto'
import fs from 'node:fs/promises'
import { after, before, describe, it } from 'node:test'
import type { ErrorCode } from '../../errors/eitri-error.ts'
import type { ConfinedTarget } from '../confined-function.ts'
import type { Executor, ExecutorCall } from './executor.ts'
import { createScratchFolder, removeScratchFolder } from '../scratch-folder.ts'

/** The module the contract's functions come from (JavaScript when this file is, as in dist/). */
export const FIXTURES = import.meta.resolve(
  `../fixtures/confined-functions.${import.meta.url.endsWith('.ts') ? 'ts' : 'js'}`,
)

/** A target naming a fixture function. */
export function fixture(name: string): ConfinedTarget {
  return { type: 'module', module: FIXTURES, export: name }
}

/** sha256 (hex) of a text. */
export function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex')
}

/** Registers the contract suite for the executor `makeExecutor` answers. */
export function executorContract(label: string, makeExecutor: () => Promise<Executor>): void {
  void describe(`executor contract: ${label}`, () => {
    let executor: Executor
    const workdirs: string[] = []
    before(async () => {
      executor = await makeExecutor()
    })
    after(async () => {
      await Promise.all(workdirs.map(removeScratchFolder))
    })
    const call = async (
      target: ConfinedTarget,
      input: unknown,
      extra: Partial<ExecutorCall> = {},
    ): Promise<ExecutorCall> => {
      const workdir = await createScratchFolder()
      workdirs.push(workdir)
      return { target, input, workdir, timeoutMs: 10_000, maxOutputBytes: 100_000, ...extra }
    }

    void it('answers what the function answered, sync or async', async () => {
      const input = { text: 'hello', list: [1, 2, { deep: true }], nothing: null }
      for (const name of ['echo', 'echoLater']) {
        const report = await executor.run(await call(fixture(name), input))
        assert.equal(report.status, 'ok', report.error)
        assert.deepEqual(report.result, input)
        assert.deepEqual(report.files, {})
      }
    })

    void it('reports a function that throws as an error with its message', async () => {
      const report = await executor.run(await call(fixture('fail'), {}))
      assert.equal(report.status, 'error')
      assert.match(report.error ?? '', /broken on purpose/)
    })

    void it('finds the files written in the scratch folder itself, new or changed only', async () => {
      const written = await call(fixture('writeNote'), { name: 'sub/note.txt', content: 'new' })
      await fs.writeFile(`${written.workdir}/untouched.txt`, 'as before')
      const report = await executor.run(written)
      assert.equal(report.status, 'ok', report.error)
      assert.deepEqual(report.files, { 'sub/note.txt': sha256('new') })
      const again = await call(fixture('writeNote'), { name: 'note.txt', content: 'changed' })
      await fs.writeFile(`${again.workdir}/note.txt`, 'original')
      assert.deepEqual((await executor.run(again)).files, { 'note.txt': sha256('changed') })
    })

    void it('reports the deadline as a timeout, promptly', async () => {
      const started = performance.now()
      const report = await executor.run(await call(fixture('waitForever'), {}, { timeoutMs: 300 }))
      assert.equal(report.status, 'timeout')
      assert.ok(performance.now() - started < 5000, 'the deadline stopped it')
    })

    void it('reports cancellation as an error, promptly', async () => {
      const controller = new AbortController()
      setTimeout(() => controller.abort(), 200)
      const started = performance.now()
      const report = await executor.run(await call(fixture('waitForever'), {}), {
        signal: controller.signal,
      })
      assert.equal(report.status, 'error')
      assert.equal(report.error, 'cancelled')
      assert.ok(performance.now() - started < 5000, 'cancellation stopped it')
    })

    void it('runs closures in process and refuses them out of process, where none can load', async () => {
      const closure: ConfinedTarget = { type: 'function', function: () => 'from a closure' }
      if (!executor.outOfProcess) {
        assert.equal((await executor.run(await call(closure, {}))).result, 'from a closure')
        return
      }
      await assert.rejects(executor.run(await call(closure, {})), (error: unknown) => {
        assert.equal((error as { code?: ErrorCode }).code, 'invalid_definition')
        assert.match(String(error), /a closure cannot be loaded in another process/)
        return true
      })
    })
  })
}
