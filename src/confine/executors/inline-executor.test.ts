import assert from 'node:assert/strict'
import fs from 'node:fs/promises'
import path from 'node:path'
import { describe, it } from 'node:test'
import { executorContract, sha256 } from './executor-contract.ts'
import { inlineExecutor } from './inline-executor.ts'
import { createScratchFolder, removeScratchFolder } from '../scratch-folder.ts'

executorContract('inline', async () => inlineExecutor())

describe('inlineExecutor', () => {
  it('takes the function at its word for writes outside the scratch folder', async (t) => {
    const workdir = await createScratchFolder()
    const elsewhere = await createScratchFolder()
    t.after(() => Promise.all([removeScratchFolder(workdir), removeScratchFolder(elsewhere)]))
    const report = await inlineExecutor().run({
      target: {
        type: 'function',
        function: async (_input, call) => {
          await fs.writeFile(path.join(elsewhere, 'out.txt'), 'outside')
          call.reportWrite(path.join(elsewhere, 'out.txt'))
          call.reportWrite(path.join(elsewhere, 'never-written.txt'))
          return 'ok'
        },
      },
      input: {},
      workdir,
      timeoutMs: 1000,
      maxOutputBytes: 1000,
    })
    assert.deepEqual(report.files, {
      [path.join(elsewhere, 'out.txt')]: sha256('outside'),
      [path.join(elsewhere, 'never-written.txt')]: '',
    })
  })

  it('aborts the function’s signal at the deadline', async (t) => {
    const workdir = await createScratchFolder()
    t.after(() => removeScratchFolder(workdir))
    let seen: AbortSignal | undefined
    const report = await inlineExecutor().run({
      target: {
        type: 'function',
        function: (_input, call) => {
          seen = call.signal
          return new Promise(() => undefined)
        },
      },
      input: {},
      workdir,
      timeoutMs: 50,
      maxOutputBytes: 1000,
    })
    assert.equal(report.status, 'timeout')
    assert.equal(seen?.aborted, true)
  })
})
