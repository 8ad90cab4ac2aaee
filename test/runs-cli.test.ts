/**
 * `eitri runs` through the real `eitri` process, against a SQLite store the test fills: the
 * list (newest first, a dead owner's Run swept to failed/interrupted), one Run with its journal
 * and children, and a cancel request the owning process hears.
 */
import assert from 'node:assert/strict'
import path from 'node:path'
import { describe, it } from 'node:test'
import { RunLeases } from '../src/agent/run-lease.ts'
import { openStore } from '../src/store/open-store.ts'
import type { RunEvent, RunRecord } from '../src/store/run-record.ts'
import { runEitri } from './helpers/eitri-process.ts'
import { makeScratch, type Scratch } from './helpers/scratch.ts'

const LIVE = { owner: 'test-live-owner', ttlMs: 600_000 }

/** A store holding: `parent` (completed, 2 events), `child` (running, leased), `dead`. */
async function filledStore(scratch: Scratch): Promise<{ url: string; flags: string[] }> {
  const url = `sqlite:${path.join(scratch.root, 'runs.sqlite')}`
  await using store = await openStore(url)
  await store.admitRun({ id: 'parent', agentId: 'planner', trigger: { task: 'plan' } })
  await store.appendRunEvents('parent', [
    { type: 'tool-call-start', data: { tool: 'read_file' } },
    { type: 'tool-call-end', data: { ok: true } },
  ])
  await store.finishRun('parent', { status: 'completed', value: { answer: 42 }, output: 'done' })
  await store.admitRun({ id: 'child', parentId: 'parent', agentId: 'helper', lease: LIVE })
  // An owner that never renews: its lease lapses at once, as when its process was killed.
  await store.admitRun({ id: 'dead', agentId: 'helper', lease: { owner: 'gone', ttlMs: 1 } })
  await new Promise((resolve) => setTimeout(resolve, 20))
  return { url, flags: [...scratch.flags, '--store', url] }
}

describe('eitri runs', () => {
  it('lists Runs newest first, the dead owner’s Run as failed/interrupted, and filters by status', async () => {
    await using scratch = await makeScratch()
    const { flags } = await filledStore(scratch)
    const listed = await runEitri(['runs', '--json', ...flags])
    assert.equal(listed.status, 0, listed.stderr)
    const runs = JSON.parse(listed.stdout) as RunRecord[]
    assert.deepEqual(
      runs.map((run) => [run.id, run.status, run.reason]),
      [
        ['dead', 'failed', 'interrupted'],
        ['child', 'running', null],
        ['parent', 'completed', null],
      ],
    )
    assert.equal(runs[0]?.settlementStatus, 'review')
    assert.equal(runs[1]?.parentId, 'parent')

    const text = await runEitri(['runs', ...flags])
    assert.equal(text.status, 0, text.stderr)
    assert.match(text.stdout, /^dead\s+helper\s+failed: interrupted\s+review\s+\S+\s+\S+Z$/m)
    assert.match(text.stdout, /^child\s+helper\s+running\s+open\s+\S+\s+-$/m)

    const failed = await runEitri(['runs', '--status', 'failed', '--json', ...flags])
    assert.deepEqual(
      (JSON.parse(failed.stdout) as RunRecord[]).map((run) => run.id),
      ['dead'],
    )
    const wrong = await runEitri(['runs', '--status', 'finished', ...flags])
    assert.equal(wrong.status, 2)
    assert.match(wrong.stderr, /--status finished is no Run status: use one of running, waiting/)
  })

  it('shows one Run with its journal in order and its children; names an unknown id', async () => {
    await using scratch = await makeScratch()
    const { flags } = await filledStore(scratch)
    const shown = await runEitri(['runs', 'show', 'parent', '--json', ...flags])
    assert.equal(shown.status, 0, shown.stderr)
    const { run, events, children } = JSON.parse(shown.stdout) as {
      run: RunRecord
      events: RunEvent[]
      children: RunRecord[]
    }
    assert.equal(run.status, 'completed')
    assert.deepEqual(run.value, { answer: 42 })
    assert.deepEqual(
      events.map((event) => [event.sequence, event.type]),
      events.map((event, index) => [index + 1, event.type]),
    )
    const types = events.map((event) => event.type)
    assert.ok(
      types.indexOf('tool-call-start') < types.indexOf('tool-call-end'),
      `journal order: ${types.join(', ')}`,
    )
    assert.deepEqual(
      children.map((child) => child.id),
      ['child'],
    )

    const text = await runEitri(['runs', 'show', 'parent', ...flags])
    assert.match(text.stdout, /^ {2}output: done$/m)
    assert.match(text.stdout, /^ {2}\d+\. \S+ {2}tool-call-start \{"tool":"read_file"\}$/m)
    assert.match(text.stdout, /^Child Runs:\n {2}child\s+helper\s+running/m)

    const missing = await runEitri(['runs', 'show', 'nope', ...flags])
    assert.equal(missing.status, 1)
    assert.match(missing.stderr, /No Run with id "nope"; eitri runs lists them/)
    const bare = await runEitri(['runs', 'show', ...flags])
    assert.equal(bare.status, 2)
    assert.match(bare.stderr, /needs a Run id/)
  })

  it('cancel leaves a durable request the owning process hears; an ended Run is refused', async () => {
    await using scratch = await makeScratch()
    const { url, flags } = await filledStore(scratch)
    await using store = await openStore(url)
    const heard: string[] = []
    let hear: (id: string) => void = () => undefined
    const asked = new Promise<string>((resolve) => (hear = resolve))
    const leases = await RunLeases.start(store, {
      cancelPollMs: 50,
      onCancelRequested: (id, request) => {
        heard.push(`${id} by ${request.by}`)
        hear(id)
      },
    })
    try {
      await leases.admit({ id: 'worker', agentId: 'helper' })
      const cancelled = await runEitri(['runs', 'cancel', 'worker', ...flags])
      assert.equal(cancelled.status, 0, cancelled.stderr)
      assert.match(cancelled.stdout, /Asked the process running worker to cancel it/)
      assert.equal(await asked, 'worker')
      assert.deepEqual(heard, ['worker by person'])
      const row = await store.getRun('worker')
      assert.equal(row?.cancelRequestedBy, 'person')
      assert.ok(
        (await store.listRunEvents('worker')).some((event) => event.type === 'cancel-requested'),
      )
    } finally {
      await leases.close()
    }

    const ended = await runEitri(['runs', 'cancel', 'parent', ...flags])
    assert.equal(ended.status, 1)
    assert.match(
      ended.stderr,
      /Run parent already ended \(completed at \S+\); there is nothing to cancel/,
    )
    const swept = await runEitri(['runs', 'cancel', 'dead', ...flags])
    assert.equal(swept.status, 1)
    assert.match(swept.stderr, /Run dead already ended \(failed: interrupted at /)
  })
})
