import assert from 'node:assert/strict'
import { spawnSync } from 'node:child_process'
import fs from 'node:fs'
import os from 'node:os'
import path from 'node:path'
import { describe, it, type TestContext } from 'node:test'
import { setTimeout as delay } from 'node:timers/promises'
import { EitriError } from '../../errors/eitri-error.ts'
import { engineContract, failureOf, probeCapabilities, valueOf } from '../engine-contract.ts'
import { IsolateEngine } from './isolate-engine.ts'

/** Settles with `promise`, or with 'hung' after `ms`. */
function within<T>(promise: Promise<T>, ms: number): Promise<T | 'hung'> {
  return Promise.race([promise, delay(ms, 'hung' as const, { ref: false })])
}

/**
 * A stand-in for the sandbox's Node: says it is ready on fd 3 like the real one, waits for the
 * first message, then does what `misbehave` says (as a guest that took over the sandbox could).
 */
function fakeSandbox(t: TestContext, misbehave: string): string {
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'eitri-fake-sandbox-'))
  t.after(() => fs.rmSync(folder, { recursive: true, force: true }))
  const file = path.join(folder, 'node')
  fs.writeFileSync(
    file,
    `#!/bin/bash\nprintf '{"type":"ready","pid":%d}\\n' $$ >&3\nread -r line\n${misbehave}\nexec sleep 30\n`,
    { mode: 0o755 },
  )
  return file
}

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

  it('settles stats() when the sandbox dies before answering, and every other pending request', async () => {
    await using engine = new IsolateEngine()
    const session = await engine.createSession({ memoryLimitMb: 64, namespaces: {} })
    const { pid } = await engine.stats()
    assert.ok(pid !== undefined)
    // Stopped, it cannot answer; killed, it never will.
    process.kill(pid, 'SIGSTOP')
    const stats = engine.stats().then(
      () => 'answered',
      (error: unknown) => (EitriError.isInstance(error) ? error.code : String(error)),
    )
    const running = session.eval('1', { timeoutMs: 30_000 })
    const creating = engine.createSession({ memoryLimitMb: 64, namespaces: {} }).then(
      () => 'created',
      (error: unknown) => (EitriError.isInstance(error) ? error.code : String(error)),
    )
    await delay(100)
    process.kill(pid, 'SIGKILL')
    assert.equal(await within(stats, 5_000), 'sandbox_reset')
    assert.equal(failureOf((await within(running, 5_000)) as never), 'sandbox_reset')
    assert.equal(await within(creating, 5_000), 'sandbox_reset')
    // The control: the next sandbox answers.
    assert.notEqual((await engine.stats()).pid, pid)
  })

  it('ends a sandbox that writes a line out of protocol or without end, and never holds the flood', async (t) => {
    for (const [name, misbehave] of [
      ['not JSON', "printf 'garbage\\n' >&3"],
      ['out of protocol', `printf '{"type":"created","session":"s1","extra":1}\\n' >&3`],
      ['an endless line', 'head -c 400000000 /dev/zero >&3'],
    ] as const) {
      await using engine = new IsolateEngine({ nodePath: fakeSandbox(t, misbehave) })
      const before = process.memoryUsage().rss
      const started = performance.now()
      const created = await within(
        engine.createSession({ memoryLimitMb: 64, namespaces: {} }).then(
          () => 'created',
          (error: unknown) => (EitriError.isInstance(error) ? error.message : String(error)),
        ),
        20_000,
      )
      assert.match(String(created), /sandbox restarted .*out of protocol/, name)
      assert.ok(performance.now() - started < 8_000, `${name}: at once, not at a timeout`)
      assert.ok(
        process.memoryUsage().rss - before < 250 * 1024 * 1024,
        `${name}: the server held ${process.memoryUsage().rss - before} bytes of it`,
      )
    }
  })

  it('the control: a sandbox that keeps to the protocol creates sessions', async (t) => {
    const fake = fakeSandbox(t, `printf '{"type":"created","session":"s1"}\\n' >&3`)
    await using engine = new IsolateEngine({ nodePath: fake })
    const session = await engine.createSession({ memoryLimitMb: 64, namespaces: {} })
    assert.equal(session.lost, undefined)
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
