import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import fs from 'node:fs/promises'
import path from 'node:path'
import { describe, it, type TestContext } from 'node:test'
import { setTimeout as delay } from 'node:timers/promises'
import { executorContract, fixture, sha256 } from './executor-contract.ts'
import type { ExecutorCall } from './executor.ts'
import { processExecutor } from './process-executor.ts'
import { createScratchFolder, removeScratchFolder } from '../scratch-folder.ts'
import { isAlive, processesWithArgument } from './test-processes.ts'

executorContract('process', async () => processExecutor())

async function callIn(
  t: TestContext,
  name: string,
  input: unknown,
  extra: Partial<ExecutorCall> = {},
): Promise<ExecutorCall> {
  const workdir = await createScratchFolder()
  t.after(() => removeScratchFolder(workdir))
  return {
    target: fixture(name),
    input,
    workdir,
    timeoutMs: 10_000,
    maxOutputBytes: 100_000,
    ...extra,
  }
}

/** Runs `spawnSurvivor` until `stop` ends it; answers the pids it reported and its marker. */
async function survivorRun(
  t: TestContext,
  extra: Partial<ExecutorCall>,
  /** Aborted once all three processes have started (not after a fixed time: a slow machine). */
  cancel?: AbortController,
): Promise<{ pids: number[]; marker: string; status: string }> {
  const pidFolder = await createScratchFolder()
  t.after(() => removeScratchFolder(pidFolder))
  const pidFile = path.join(pidFolder, 'pids')
  const marker = `eitri-survivor-${randomUUID()}`
  const poll =
    cancel === undefined
      ? undefined
      : setInterval(() => {
          void fs
            .readFile(pidFile, 'utf8')
            .then((text) => {
              if (text.trim().split('\n').length >= 3) cancel.abort()
            })
            .catch(() => undefined)
        }, 50)
  const report = await processExecutor()
    .run(await callIn(t, 'spawnSurvivor', { pidFile, marker }, extra), {
      ...(cancel === undefined ? {} : { signal: cancel.signal }),
    })
    .finally(() => clearInterval(poll))
  const pids = (await fs.readFile(pidFile, 'utf8')).trim().split('\n').map(Number)
  return { pids, marker, status: report.status }
}

describe('processExecutor', () => {
  it('runs the function in a child process, in the scratch folder, with its own Node', async (t) => {
    const call = await callIn(t, 'writeInWorkingFolder', { content: 'by a relative path' })
    const report = await processExecutor().run(call)
    assert.equal(report.status, 'ok', report.error)
    assert.equal(report.result, call.workdir)
    assert.deepEqual(report.files, { 'from-cwd.txt': sha256('by a relative path') })
  })

  it('keeps what the function printed apart from its result', async (t) => {
    const report = await processExecutor().run(
      await callIn(t, 'printAndAnswer', { printed: 'line one\nno newline', answer: { n: 1 } }),
    )
    assert.equal(report.stdout, 'line one\nno newline')
    assert.deepEqual(report.result, { n: 1 })
    const printed = await processExecutor().run(await callIn(t, 'print', { lines: ['a', 'b'] }))
    assert.equal(printed.stdout, 'a\nb\n')
    assert.equal(printed.result, undefined)
  })

  it('keeps its result through a flood of output, which it cuts', async (t) => {
    const report = await processExecutor().run(
      await callIn(t, 'flood', { bytes: 5_000_000 }, { maxOutputBytes: 10_000 }),
    )
    assert.equal(report.status, 'ok', report.error)
    assert.equal(report.result, 'done')
    assert.ok(report.stdout.length < 12_000, `kept ${report.stdout.length} characters`)
    assert.match(report.stdout, /dropped/)
    const raw = await processExecutor().run(
      await callIn(t, 'floodRaw', { bytes: 5_000_000 }, { maxOutputBytes: 10_000 }),
    )
    assert.equal(raw.status, 'ok', raw.error)
    assert.equal(raw.result, 'done')
    assert.match(raw.stdout, /^z{10000}\n\[\.\.\. \d+ more bytes of output dropped\]$/)
  })

  it('passes only the minimal environment: no secret of the parent', async (t) => {
    process.env['EITRI_TEST_SECRET'] = 'hunter2'
    t.after(() => delete process.env['EITRI_TEST_SECRET'])
    const call = await callIn(t, 'environment', {})
    const report = await processExecutor().run(call)
    const seen = report.result as { names: string[]; home: string; secret: unknown }
    assert.equal(seen.secret, undefined)
    assert.deepEqual(
      seen.names.filter((name) => name !== 'EITRI_CONFINED_CALL'),
      ['HOME', 'LANG', 'PATH', 'TMPDIR'],
    )
    assert.equal(seen.home, call.workdir)
    const inherited = await processExecutor().run({
      ...(await callIn(t, 'environment', {})),
      inheritedEnvironment: { EITRI_TEST_SECRET: 'passed on purpose', PATH: '/usr/bin' },
    })
    assert.equal((inherited.result as { secret: unknown }).secret, 'passed on purpose')
  })

  it('kills a spinning child at the deadline', async (t) => {
    const started = performance.now()
    const report = await processExecutor().run(await callIn(t, 'spin', {}, { timeoutMs: 500 }))
    assert.equal(report.status, 'timeout')
    assert.ok(performance.now() - started < 4000)
  })

  it('leaves no survivor at the deadline, not even a double-forked one in a new session that ignores SIGTERM', async (t) => {
    const { pids, marker, status } = await survivorRun(t, { timeoutMs: 5000 })
    assert.equal(status, 'timeout')
    assert.equal(pids.length, 3, 'the function, the middle and the grandchild reported')
    await delay(50)
    assert.deepEqual(
      pids.filter((pid) => isAlive(pid)),
      [],
    )
    assert.deepEqual(processesWithArgument(marker), [])
  })

  it('kills the whole group, escaped descendants included, when cancelled', async (t) => {
    const { pids, marker, status } = await survivorRun(t, {}, new AbortController())
    assert.equal(status, 'error')
    assert.equal(pids.length, 3)
    assert.deepEqual(
      pids.filter((pid) => isAlive(pid)),
      [],
    )
    assert.deepEqual(processesWithArgument(marker), [])
  })

  it('reports a module that does not load, and an export that is missing', async (t) => {
    const missing = await processExecutor().run({
      ...(await callIn(t, 'echo', {})),
      target: { type: 'module', module: 'file:///nonexistent/module.ts', export: 'x' },
    })
    assert.equal(missing.status, 'error')
    assert.match(missing.error ?? '', /Cannot find module/)
    const noExport = await processExecutor().run(await callIn(t, 'noSuchExport', {}))
    assert.equal(noExport.status, 'error')
    assert.match(noExport.error ?? '', /has no export "noSuchExport"/)
  })

  it('reports a child that could not start', async (t) => {
    const report = await processExecutor({ nodePath: '/nonexistent/node' }).run(
      await callIn(t, 'echo', {}),
    )
    assert.equal(report.status, 'error')
    assert.match(report.error ?? '', /could not start/)
  })
})
