/**
 * The jail executor against a real bubblewrap jail. Where the jail cannot run these tests fail,
 * saying how to install bubblewrap: they never skip.
 */
import assert from 'node:assert/strict'
import { randomUUID } from 'node:crypto'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { after, describe, it, type TestContext } from 'node:test'
import { z } from 'zod'
import { createWorkspaceView } from '../../access/confined-workspace.ts'
import { Jail } from '../../jail/jail.ts'
import { runToolCall } from '../../tool/run-tool-call.ts'
import { contextWith } from '../../tool/test-context.ts'
import { DirectoryTree } from '../../workspace/directory-tree.ts'
import { confine } from '../confine.ts'
import { executorContract, fixture, FIXTURES, sha256 } from './executor-contract.ts'
import type { ExecutorCall } from './executor.ts'
import { jailExecutor } from './jail-executor.ts'
import { packageRootOf, RUNNER_PATH } from '../child/runner-path.ts'
import { createScratchFolder, removeScratchFolder } from '../scratch-folder.ts'
import { processesWithArgument } from './test-processes.ts'

let shared: Promise<{ jail: Jail; base: string }> | undefined

/** One jail over a small workspace for the whole file; fails when the jail is unavailable. */
async function availableJail(): Promise<Jail> {
  shared ??= (async () => {
    const base = await fs.realpath(await fs.mkdtemp(path.join(os.tmpdir(), 'eitri-confine-jail-')))
    await fs.mkdir(path.join(base, 'workspace'))
    await fs.writeFile(path.join(base, 'workspace', 'hello.txt'), 'hello')
    const tree = new DirectoryTree(path.join(base, 'workspace'))
    return { jail: new Jail({ tree, view: createWorkspaceView({ tree }) }), base }
  })()
  const { jail } = await shared
  const availability = await jail.availability()
  assert.ok(
    availability.available,
    availability.available
      ? ''
      : `The jail is unavailable: ${availability.reason}. Install bubblewrap (apt-get install bubblewrap); to fix: ${availability.fix}.`,
  )
  return jail
}

after(async () => {
  if (shared === undefined) return
  const { jail, base } = await shared
  await jail.close()
  await fs.rm(base, { recursive: true, force: true })
})

executorContract('jail', async () => jailExecutor(await availableJail()))

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

describe('jailExecutor', () => {
  it('runs the function inside the jail: /workspace but no host home or /etc/shadow, not as root', async (t) => {
    const executor = jailExecutor(await availableJail())
    const report = await executor.run(await callIn(t, 'lookAround', {}))
    assert.equal(report.status, 'ok', report.error)
    const seen = report.result as Record<string, unknown>
    // eitri's package root is bound at its host path, so from a checkout under /root the jail
    // has the folders down to it, and nothing else of the host's home.
    const packageRoot = packageRootOf(RUNNER_PATH)
    const rootHome = packageRoot.startsWith('/root/') ? [packageRoot.split('/')[2]] : null
    assert.deepEqual(
      {
        cwd: seen['cwd'],
        workdir: seen['workdir'],
        home: seen['home'],
        workspace: seen['workspace'],
        rootHome: seen['rootHome'],
        shadow: seen['shadow'],
      },
      {
        cwd: '/scratch',
        workdir: '/scratch',
        home: '/scratch',
        workspace: true,
        rootHome,
        shadow: false,
      },
    )
    assert.notEqual(seen['uid'], 0)
    assert.deepEqual(report.files, { 'seen.txt': sha256('inside') })
  })

  it('passes no secret of the parent', async (t) => {
    process.env['EITRI_TEST_SECRET'] = 'hunter2'
    t.after(() => delete process.env['EITRI_TEST_SECRET'])
    const report = await jailExecutor(await availableJail()).run(await callIn(t, 'environment', {}))
    assert.equal(report.status, 'ok', report.error)
    assert.equal((report.result as { secret: unknown }).secret, undefined)
  })

  it('kills a spinning function, and all it started, at the deadline', async (t) => {
    const executor = jailExecutor(await availableJail())
    const started = performance.now()
    const spin = await executor.run(await callIn(t, 'spin', {}, { timeoutMs: 1000 }))
    assert.equal(spin.status, 'timeout')
    assert.ok(performance.now() - started < 6000)
    const marker = `eitri-survivor-${randomUUID()}`
    // Long enough for three Node processes to start on a loaded machine before the deadline.
    const survivor = await executor.run(
      await callIn(t, 'spawnSurvivor', { pidFile: '/scratch/pids', marker }, { timeoutMs: 5000 }),
    )
    assert.equal(survivor.status, 'timeout')
    assert.ok('pids' in survivor.files, 'the escaped processes had started')
    assert.deepEqual(processesWithArgument(marker), [])
  })

  it('confines a tool: writes allowed in tempdir mode, a violation in container mode', async () => {
    const executor = jailExecutor(await availableJail())
    const definition = {
      name: 'write_note',
      description: 'Writes a note.',
      parameters: z.object({ name: z.string(), content: z.string() }),
      executor,
    }
    const target = { module: FIXTURES, export: 'writeNote' }
    const input = { name: 'note.txt', content: 'jailed' }
    const tempdir = await runToolCall(
      confine(target, { ...definition, mode: 'tempdir' }),
      input,
      contextWith(),
    )
    assert.equal(tempdir.type, 'success', tempdir.content)
    assert.deepEqual((tempdir.metadata['sandbox'] as { outputHashes: unknown }).outputHashes, {
      'note.txt': sha256('jailed'),
    })
    const container = await runToolCall(
      confine(target, { ...definition, mode: 'container' }),
      input,
      contextWith(),
    )
    assert.equal(container.type === 'error' && container.code, 'sandbox_violation')
  })

  it('runs a module from a package folder nobody can reach, and names the fix when it may not enter it', async (t) => {
    const executor = jailExecutor(await availableJail())
    // mkdtemp makes a 0700 folder: as root, closed to the jail's user, and so is its parent.
    const closed = await fs.realpath(
      await fs.mkdtemp(path.join(os.tmpdir(), 'eitri-confine-closed-')),
    )
    t.after(() => fs.rm(closed, { recursive: true, force: true }))
    const packageFolder = path.join(closed, 'pkg')
    await fs.mkdir(packageFolder, { mode: 0o700 })
    await fs.chmod(packageFolder, 0o700)
    await fs.writeFile(path.join(packageFolder, 'package.json'), '{"type":"module"}\n', {
      mode: 0o644,
    })
    await fs.writeFile(
      path.join(packageFolder, 'shout.js'),
      'export function shout(input) { return String(input).toUpperCase() }\n',
      { mode: 0o644 },
    )
    const call = async (): Promise<ExecutorCall> => ({
      ...(await callIn(t, 'echo', 'hello')),
      target: {
        type: 'module',
        module: pathToFileURL(path.join(packageFolder, 'shout.js')).href,
        export: 'shout',
      },
    })
    if ((await availableJail()).identity.dropped) {
      await assert.rejects(executor.run(await call()), (error: Error & { code?: string }) => {
        assert.equal(error.code, 'jail_unavailable')
        assert.match(error.message, new RegExp(`may not enter ${packageFolder} \\(mode 700\\)`))
        assert.match(error.message, /To fix: let others enter and read that folder/)
        return true
      })
    }
    // Open to others itself, below a folder that stays closed: the jail mounts it and it runs.
    await fs.chmod(packageFolder, 0o755)
    const report = await executor.run(await call())
    assert.equal(report.status, 'ok', report.error)
    assert.equal(report.result, 'HELLO')
  })
})
