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

/**
 * A stand-in for the sandbox, in Node, for a sandbox that is busy but alive: it creates sessions,
 * never answers an eval, and answers each ping only after streaming a large (valid) message in
 * small parts for `streamMs`: it owes the answer long past any silence limit, yet keeps sending.
 */
function busySandbox(t: TestContext, streamMs: number): string {
  const folder = fs.mkdtempSync(path.join(os.tmpdir(), 'eitri-busy-sandbox-'))
  t.after(() => fs.rmSync(folder, { recursive: true, force: true }))
  const script = path.join(folder, 'busy.mjs')
  fs.writeFileSync(
    script,
    `
    import fs from 'node:fs'
    const out = fs.createWriteStream(null, { fd: 3 })
    out.write(JSON.stringify({ type: 'ready', pid: process.pid }) + '\\n')
    let rest = ''
    process.stdin.on('data', (chunk) => {
      const lines = (rest + chunk).split('\\n')
      rest = lines.pop()
      for (const line of lines) {
        const message = JSON.parse(line)
        if (message.type === 'create') out.write(JSON.stringify({ type: 'created', session: message.session }) + '\\n')
        if (message.type !== 'stats') continue
        out.write('{"type":"call","evalId":999999,"callId":1,"namespace":"probe","name":"echo","args":"')
        const started = Date.now()
        const timer = setInterval(() => {
          out.write('x'.repeat(10000))
          if (Date.now() - started < ${streamMs}) return
          clearInterval(timer)
          out.write('"}\\n' + JSON.stringify({ type: 'stats', requestId: message.requestId, rss: 1, sessions: 1 }) + '\\n')
        }, 100)
      }
    })
    `,
  )
  const file = path.join(folder, 'node')
  fs.writeFileSync(
    file,
    `#!/bin/bash\nexec ${JSON.stringify(process.execPath)} ${JSON.stringify(script)}\n`,
    {
      mode: 0o755,
    },
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

  it('keeps a sandbox that is slow to answer a ping but not hung: the other sessions keep their state', async () => {
    await using engine = new IsolateEngine({ silenceLimitMs: 4_000 })
    const kept = await engine.createSession({ memoryLimitMb: 64, namespaces: {} })
    assert.equal(valueOf(await kept.eval('const kept = 1; kept', { timeoutMs: 5_000 })), '1')
    const { pid } = await engine.stats()
    assert.ok(pid !== undefined)
    const waiting = await engine.createSession({ memoryLimitMb: 64, namespaces: {} })
    const running = waiting.eval('await new Promise(() => {})', { timeoutMs: 300 })
    await delay(50)
    // Frozen well past the second the fence used to give a ping (it fires at 1.3 s), but
    // within the silence limit.
    process.kill(pid, 'SIGSTOP')
    await delay(2_500)
    process.kill(pid, 'SIGCONT')
    const outcome = await within(running, 10_000)
    assert.notEqual(outcome, 'hung')
    assert.equal(failureOf(outcome as never), 'timeout')
    assert.equal(valueOf(await kept.eval('kept', { timeoutMs: 5_000 })), '1')
    assert.equal((await engine.stats()).pid, pid, 'the same sandbox')
  })

  it('the control: kills a sandbox that sends nothing and owes a ping past the silence limit', async () => {
    await using engine = new IsolateEngine({ silenceLimitMs: 2_000 })
    const session = await engine.createSession({ memoryLimitMb: 64, namespaces: {} })
    assert.equal(valueOf(await session.eval('const gone = 1; gone', { timeoutMs: 5_000 })), '1')
    const { pid } = await engine.stats()
    assert.ok(pid !== undefined)
    process.kill(pid, 'SIGSTOP')
    const started = performance.now()
    const outcome = await within(session.eval('gone', { timeoutMs: 300 }), 15_000)
    const elapsed = performance.now() - started
    assert.notEqual(outcome, 'hung')
    assert.match(failureOf(outcome as never), /^(sandbox_reset|timeout)$/)
    assert.ok(elapsed >= 1_300 + 2_000, `not before the fence and the silence limit: ${elapsed} ms`)
    assert.equal(session.lost !== undefined, true)
    assert.notEqual((await engine.stats()).pid, pid, 'a new sandbox')
  })

  it('counts a sandbox that keeps sending as alive, however late it answers the ping', async (t) => {
    await using engine = new IsolateEngine({
      nodePath: busySandbox(t, 1_500),
      // The stand-in's script is not among the files a confined sandbox is shown.
      confinement: 'none',
      silenceLimitMs: 500,
    })
    const session = await engine.createSession({ memoryLimitMb: 64, namespaces: {} })
    const first = await engine.stats()
    const started = performance.now()
    const outcome = await within(session.eval('1', { timeoutMs: 100 }), 20_000)
    assert.notEqual(outcome, 'hung')
    // Answered for by the fence after two pings the sandbox answered: the eval only is given up.
    assert.equal(failureOf(outcome as never), 'timeout')
    assert.ok(performance.now() - started > 2 * 1_500, 'after both pings were answered')
    assert.equal((await engine.stats()).pid, first.pid, 'the sandbox was kept')
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
