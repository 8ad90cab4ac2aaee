import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import { describe, it } from 'node:test'
import { engineContract, failureOf, probeCapabilities, valueOf } from '../engine-contract.ts'
import { IsolateEngine } from './isolate-engine.ts'

engineContract('isolated-vm', () => new IsolateEngine())

describe('the isolated-vm engine', () => {
  it('restarts a sandbox process that died; its sessions answer sandbox_reset, new ones work', async () => {
    await using engine = new IsolateEngine()
    const session = await engine.createSession({ memoryLimitMb: 64, namespaces: {} })
    assert.equal(valueOf(await session.eval('const kept = 1; kept', { timeoutMs: 5_000 })), '1')
    const { pid } = await engine.stats()
    assert.ok(pid !== undefined)
    const running = session.eval('while (true) {}', { timeoutMs: 30_000 })
    await new Promise((resolve) => setTimeout(resolve, 100))
    process.kill(pid, 'SIGKILL')
    assert.equal(failureOf(await running), 'sandbox_reset')
    assert.equal(session.lost, 'sandbox_reset')
    assert.equal(failureOf(await session.eval('kept', { timeoutMs: 5_000 })), 'sandbox_reset')
    const fresh = await engine.createSession({ memoryLimitMb: 64, namespaces: {} })
    assert.equal(valueOf(await fresh.eval('typeof kept', { timeoutMs: 5_000 })), 'undefined')
    assert.notEqual((await engine.stats()).pid, pid)
  })

  it('answers every capability call with the eval that made it, several at once', async () => {
    await using engine = new IsolateEngine()
    const session = await engine.createSession({
      memoryLimitMb: 64,
      namespaces: { probe: ['echo', 'wait'] },
    })
    const outcome = await session.eval(
      'const all = await Promise.all(Array.from({ length: 50 }, (_, i) => probe.echo(i))); all.map((r) => r.echoed[0]).reduce((a, b) => a + b)',
      { timeoutMs: 10_000, capabilities: probeCapabilities },
    )
    assert.equal(valueOf(outcome), String((49 * 50) / 2))
  })

  it('is never loaded by the server: isolated-vm lives in the sandbox process only', () => {
    const script = `
      const { openWorkshop } = await import(${JSON.stringify(new URL('../../index.ts', import.meta.url).href)})
      const { createRequire } = await import('node:module')
      const loaded = () => Object.keys(createRequire(import.meta.url).cache).some((file) => file.includes('isolated-vm'))
      const folder = (await import('node:fs')).mkdtempSync((await import('node:os')).tmpdir() + '/eitri-lazy-')
      const workshop = await openWorkshop({ workspace: folder, stateDir: folder + '-state', configPath: folder + '-config.json' })
      const result = await workshop.call('js_eval', { code: '6 * 7' })
      console.log(JSON.stringify({ content: result.content, loaded: loaded() }))
      await workshop.close()
      for (const leftover of [folder, folder + '-state', folder + '-config.json']) (await import('node:fs')).rmSync(leftover, { recursive: true, force: true })
    `
    const child = spawnSync(process.execPath, ['--input-type=module', '-e', script], {
      encoding: 'utf8',
      timeout: 60_000,
    })
    assert.equal(child.status, 0, child.stderr)
    assert.deepEqual(JSON.parse(child.stdout.trim().split('\n').at(-1) ?? '{}'), {
      content: '42',
      loaded: false,
    })
  })
})
