import assert from 'node:assert/strict'
import { spawn, type ChildProcess } from 'node:child_process'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { after, before, describe, it } from 'node:test'
import { setTimeout as delay } from 'node:timers/promises'
import { fileURLToPath } from 'node:url'
import { EitriError } from '../errors/eitri-error.ts'
import { openStore } from '../store/open-store.ts'
import type { RunRecord } from '../store/run-record.ts'
import { RunLeases } from './run-lease.ts'

const HOLDER = fileURLToPath(new URL('../../test/fixtures/run-lease-holder.ts', import.meta.url))
const HEARTBEAT_MS = 100
const TTL_MS = 500

let folder: string
let count = 0
before(async () => {
  folder = await fs.mkdtemp(path.join(os.tmpdir(), 'eitri-lease-'))
})
after(() => fs.rm(folder, { recursive: true, force: true }))

const freshUrl = (): string => `sqlite:${path.join(folder, `store-${++count}.sqlite`)}`

/** A child holding one Run, with the lines it printed. */
interface Holder {
  readonly child: ChildProcess
  readonly lines: string[]
  readonly exited: Promise<void>
  waitFor(prefix: string, timeoutMs?: number): Promise<string>
}

function startHolder(args: readonly string[]): Holder {
  const child = spawn(process.execPath, [HOLDER, ...args], { stdio: ['pipe', 'pipe', 'pipe'] })
  const lines: string[] = []
  let stderr = ''
  let buffer = ''
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()))
  child.stdout?.on('data', (chunk: Buffer) => {
    buffer += chunk.toString()
    const parts = buffer.split('\n')
    buffer = parts.pop() ?? ''
    lines.push(...parts)
  })
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()))
  return {
    child,
    lines,
    exited,
    async waitFor(prefix, timeoutMs = 15_000) {
      const deadline = Date.now() + timeoutMs
      for (;;) {
        const line = lines.find((entry) => entry.startsWith(prefix))
        if (line !== undefined) return line
        if (Date.now() > deadline || child.exitCode !== null) {
          assert.fail(`the holder never printed "${prefix}" (stderr: ${stderr})`)
        }
        await delay(10)
      }
    },
  }
}

async function until<T>(probe: () => Promise<T | undefined>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    const value = await probe()
    if (value !== undefined) return value
    if (Date.now() > deadline) assert.fail(`nothing happened within ${timeoutMs} ms`)
    await delay(10)
  }
}

describe('RunLeases across real processes', () => {
  it('sweeps the Run of a process killed with SIGKILL after its lease lapses, never a live one', async () => {
    const url = freshUrl()
    const args = (id: string) => [url, id, String(HEARTBEAT_MS), String(TTL_MS)]
    const victim = startHolder(args('victim-run'))
    const control = startHolder(args('control-run'))
    try {
      const victimOwner = (await victim.waitFor('held ')).slice('held '.length)
      await control.waitFor('held ')
      await using store = await openStore(url)
      const swept: RunRecord[] = []
      const watcher = await RunLeases.start(store, {
        heartbeatMs: HEARTBEAT_MS,
        ttlMs: TTL_MS,
        sweepMs: 50,
        onSwept: (runs) => swept.push(...runs),
      })
      const mine = await watcher.admit({ id: 'watcher-run' })
      assert.equal(mine.leaseOwner, watcher.owner)

      // The lease as last renewed before the kill: a starved victim may have renewed late, so
      // the lapse is measured from its real last renewal, not from the kill.
      const lapsesAt = Date.parse((await store.getRun('victim-run'))?.leaseExpiresAt ?? '')
      assert.ok(Number.isFinite(lapsesAt), 'the victim’s Run records when its lease lapses')
      victim.child.kill('SIGKILL')
      await victim.exited
      const interrupted = await until(
        async () => swept.find((run) => run.id === 'victim-run'),
        10_000,
      )
      const early = lapsesAt - Date.parse(interrupted.endedAt ?? '')
      assert.equal(interrupted.status, 'failed')
      assert.equal(interrupted.reason, 'interrupted')
      assert.ok(early <= 0, `swept ${early} ms before the lease it last renewed could lapse`)
      assert.match(
        JSON.stringify(interrupted.error),
        new RegExp(victimOwner.replaceAll('.', '\\.')),
      )

      // The living owner and the watcher's own Run outlast many sweeps and leases.
      await delay(3 * TTL_MS)
      assert.deepEqual(
        swept.map((run) => run.id),
        ['victim-run'],
      )
      assert.equal((await store.getRun('control-run'))?.status, 'running')
      assert.equal((await store.getRun('watcher-run'))?.status, 'running')

      // Closing the watcher ends its own lease, never the other process's.
      await watcher.close()
      await watcher.close()
      await delay(10)
      assert.deepEqual(
        (await store.sweepInterruptedRuns()).map((run) => run.id),
        ['watcher-run'],
      )
      assert.equal((await store.getRun('control-run'))?.status, 'running')
    } finally {
      victim.child.kill('SIGKILL')
      control.child.kill('SIGKILL')
      await Promise.all([victim.exited, control.exited])
    }
  })

  it("passes another process's cancel request to the owner within a second", async () => {
    const url = freshUrl()
    const holder = startHolder([url, 'held-run', String(HEARTBEAT_MS), String(TTL_MS)])
    try {
      await holder.waitFor('held ')
      await using store = await openStore(url)
      const asked = Date.now()
      await store.requestRunCancel('held-run', 'test')
      const ended = await until(async () => {
        const run = await store.getRun('held-run')
        return run?.status === 'running' ? undefined : run
      }, 5_000)
      const took = Date.now() - asked
      assert.equal(ended.status, 'cancelled')
      assert.ok(took < 1_000, `the owner obeyed after ${took} ms`)
      await holder.waitFor('cancelled')
      holder.child.stdin?.end()
      await holder.exited
      assert.equal(holder.child.exitCode, 0)
    } finally {
      holder.child.kill('SIGKILL')
      await holder.exited
    }
  })

  it('never keeps a process alive', async () => {
    const holder = startHolder([freshUrl(), 'idle'])
    await holder.waitFor('idle')
    await Promise.race([
      holder.exited,
      delay(5_000).then(() => assert.fail('the keeper kept its process alive')),
    ])
    assert.equal(holder.child.exitCode, 0)
  })
})

describe('RunLeases in one process', () => {
  it('passes each cancel request on once, and only its own', async () => {
    await using store = await openStore(freshUrl())
    const told: string[] = []
    const options = { heartbeatMs: 1_000, ttlMs: 3_000, cancelPollMs: 20 }
    const a = await RunLeases.start(store, { ...options, onCancelRequested: (id) => told.push(id) })
    const b = await RunLeases.start(store, {
      ...options,
      onCancelRequested: (id) => told.push(`b:${id}`),
    })
    await a.admit({ id: 'a-run' })
    await b.admit({ id: 'b-run' })
    await store.requestRunCancel('a-run', 'test')
    await delay(200)
    assert.deepEqual(told, ['a-run'])
    await a.close()
    await b.close()
  })

  it('reports a Run it tracked but no longer holds', async () => {
    await using store = await openStore(freshUrl())
    const lost: string[] = []
    const leases = await RunLeases.start(store, {
      heartbeatMs: 1_000,
      ttlMs: 3_000,
      onLost: (id) => lost.push(id),
    })
    await leases.admit({ id: 'kept' })
    await leases.admit({ id: 'taken' })
    // A sweep by another process after a long pause of this one: the lease lapsed (ended here
    // at once, the store's clock then moving on) and was swept.
    await store.releaseRunLeases(leases.owner, ['taken'])
    while ((await store.sweepInterruptedRuns()).length === 0) await delay(1)
    assert.equal((await store.getRun('taken'))?.reason, 'interrupted')
    await leases.heartbeat()
    assert.deepEqual(lost, ['taken'])
    assert.deepEqual(leases.held(), ['kept'])
    await leases.close()
    await assert.rejects(leases.admit({ id: 'late' }), (error: unknown) => {
      assert.ok(EitriError.isInstance(error))
      assert.equal(error.code, 'not_available')
      return true
    })
  })

  it('refuses intervals that would let a lease lapse between heartbeats', async () => {
    await using store = await openStore(freshUrl())
    for (const [options, pattern] of [
      [{ heartbeatMs: 5_000, ttlMs: 5_000 }, /ttlMs \(5000\) must exceed heartbeatMs/],
      [{ sweepMs: 0 }, /sweepMs is a positive whole number/],
      [{ cancelPollMs: 1.5 }, /cancelPollMs/],
      [{ owner: ' ' }, /owner/],
    ] as const) {
      await assert.rejects(RunLeases.start(store, options), (error: unknown) => {
        assert.ok(EitriError.isInstance(error))
        assert.equal(error.code, 'invalid_input')
        assert.match(error.message, pattern)
        return true
      })
    }
  })
})
