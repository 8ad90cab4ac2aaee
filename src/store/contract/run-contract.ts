/**
 * @module store/contract/run-contract
 * The contract of Run rows, their journals, and the approval and receipt logs.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { openStore } from '../open-store.ts'
import { freshStore, testDependencies, type StoreHarness } from './store-harness.ts'
import { rejectsWith } from './task-contract.ts'

/** Registers the run and audit contract. */
export function runContract(harness: StoreHarness): void {
  void describe('runs', () => {
    void it('admits a Run as running with its provenance, durably', async () => {
      const { store, url } = await freshStore(harness)
      const admitted = await store.admitRun({
        id: 'run-1',
        parentId: 'run-0',
        causedBy: ['run-a'],
        actor: 'worker',
        trigger: { task: 'count the files' },
        roster: 'team',
        agentId: 'counter',
        agentVersion: 2,
        programKind: 'llm',
        interpreterVersion: 5,
        agentDefHash: 'sha256:abc',
        chatId: 'chat-1',
        world: 'run-1',
        isolation: 'ctx',
        settlementPolicy: 'automatic',
      })
      assert.deepEqual(admitted, {
        id: 'run-1',
        kind: 'agent-task',
        parentId: 'run-0',
        causedBy: ['run-a'],
        actor: 'worker',
        trigger: { task: 'count the files' },
        status: 'running',
        reason: null,
        error: null,
        value: null,
        output: null,
        settlementStatus: 'open',
        settlementReason: null,
        createdAt: admitted.createdAt,
        startedAt: admitted.startedAt,
        updatedAt: admitted.startedAt,
        endedAt: null,
        roster: 'team',
        agentId: 'counter',
        agentVersion: 2,
        programKind: 'llm',
        interpreterVersion: 5,
        agentDefHash: 'sha256:abc',
        chatId: 'chat-1',
        world: 'run-1',
        isolation: 'ctx',
        settlementPolicy: 'automatic',
      })
      await rejectsWith(store.admitRun({ id: 'run-1' }), 'conflict')
      await rejectsWith(store.admitRun({ id: ' ' }), 'invalid_input')
      await store.close()
      await using again = await openStore(url, { dependencies: testDependencies() })
      assert.deepEqual(await again.getRun('run-1'), admitted)
    })

    void it('finishes once; waiting has no end and may still finish', async () => {
      await using store = (await freshStore(harness)).store
      await store.admitRun({ id: 'r' })
      const waiting = await store.finishRun('r', { status: 'waiting', reason: 'budget-exhausted' })
      assert.equal(waiting.status, 'waiting')
      assert.equal(waiting.endedAt, null)
      const done = await store.finishRun('r', {
        status: 'completed',
        value: { files: 3 },
        output: '3 files',
      })
      assert.equal(done.status, 'completed')
      assert.deepEqual(done.value, { files: 3 })
      assert.equal(done.output, '3 files')
      assert.equal(done.endedAt, done.updatedAt)
      assert.match(
        await rejectsWith(store.finishRun('r', { status: 'failed' }), 'conflict'),
        /already ended as completed/,
      )
      await rejectsWith(store.finishRun('nope', { status: 'failed' }), 'not_found')
      await rejectsWith(store.finishRun('r', { status: 'running' as 'failed' }), 'invalid_input')
      await store.admitRun({ id: 'f' })
      const failed = await store.finishRun('f', { status: 'failed', error: { message: 'boom' } })
      assert.deepEqual(failed.error, { message: 'boom' })
      assert.deepEqual(await store.getRun('f'), failed)
    })

    void it('finishes and settles a Run whose text holds NUL (kept as U+FFFD, JSON exact)', async () => {
      // PostgreSQL's text cannot hold U+0000: without this the terminal write (retried until it
      // lands) of an echo Run given "a\u0000b" never landed, and the Run stayed running.
      await using store = (await freshStore(harness)).store
      await store.admitRun({ id: 'nul', trigger: { task: 'a\u0000b' } })
      const done = await store.finishRun('nul', {
        status: 'completed',
        value: 'a\u0000b',
        output: 'a\u0000b',
      })
      assert.equal(done.output, 'a\uFFFDb')
      assert.equal(done.value, 'a\u0000b')
      const settled = await store.settleRun('nul', { status: 'discarded', reason: 'x\u0000' })
      assert.equal(settled.settlementReason, 'x\uFFFD')
      assert.deepEqual(await store.getRun('nul'), settled)
    })

    void it('settles open → review → merged, and never after merged or discarded', async () => {
      await using store = (await freshStore(harness)).store
      await store.admitRun({ id: 'r', settlementPolicy: 'review' })
      const review = await store.settleRun('r', { status: 'review', reason: 'policy' })
      assert.deepEqual([review.settlementStatus, review.settlementReason], ['review', 'policy'])
      const merged = await store.settleRun('r', { status: 'merged', reason: 'reviewed' })
      assert.equal(merged.settlementStatus, 'merged')
      await rejectsWith(store.settleRun('r', { status: 'discarded', reason: 'x' }), 'conflict')
      await rejectsWith(
        store.settleRun('r', { status: 'open' as 'merged', reason: 'x' }),
        'invalid_input',
      )
      await rejectsWith(store.settleRun('nope', { status: 'merged', reason: 'x' }), 'not_found')
    })

    void it('lists Runs newest first, by status and by parent', async () => {
      await using store = (await freshStore(harness)).store
      await store.admitRun({ id: 'a' })
      await store.admitRun({ id: 'b', parentId: 'a' })
      await store.admitRun({ id: 'c', parentId: 'a' })
      await store.finishRun('b', { status: 'completed' })
      assert.deepEqual(
        (await store.listRuns()).map((run) => run.id),
        ['c', 'b', 'a'],
      )
      assert.deepEqual(
        (await store.listRuns({ status: 'running' })).map((run) => run.id),
        ['c', 'a'],
      )
      assert.deepEqual(
        (await store.listRuns({ parentId: 'a' })).map((run) => run.id),
        ['c', 'b'],
      )
      assert.deepEqual(
        (await store.listRuns({ limit: 1 })).map((run) => run.id),
        ['c'],
      )
    })

    void it('lists Runs admitted within one millisecond in the order they were admitted', async () => {
      await using store = (await freshStore(harness)).store
      const createdAt = '2026-12-02T05:00:00.000Z'
      // Ids against the admission order, so an order by id would show.
      for (const id of ['m', 'z', 'a']) await store.admitRun({ id, createdAt })
      assert.deepEqual(
        (await store.listRuns()).map((run) => run.id),
        ['a', 'z', 'm'],
      )
    })

    void it('journals events in order, batch by batch', async () => {
      await using store = (await freshStore(harness)).store
      await store.admitRun({ id: 'r' })
      const first = await store.appendRunEvents('r', [
        { type: 'model-call-start', data: { step: 1 } },
        { type: 'model-call-end', data: { step: 1, text: 'hi' } },
      ])
      assert.deepEqual(
        first.map((event) => event.sequence),
        [1, 2],
      )
      await store.appendRunEvents('r', [{ type: 'tool-call-start' }])
      const all = await store.listRunEvents('r')
      assert.deepEqual(
        all.map((event) => [event.sequence, event.type, event.data]),
        [
          [1, 'model-call-start', { step: 1 }],
          [2, 'model-call-end', { step: 1, text: 'hi' }],
          [3, 'tool-call-start', null],
        ],
      )
      assert.deepEqual(
        (await store.listRunEvents('r', { after: 2 })).map((e) => e.sequence),
        [3],
      )
      await rejectsWith(store.appendRunEvents('nope', [{ type: 'x' }]), 'not_found')
      await rejectsWith(store.appendRunEvents('r', [{ type: '' }]), 'invalid_input')
    })

    void it('journals the events an admission and a finish carry, in their transactions', async () => {
      await using store = (await freshStore(harness)).store
      await store.admitRun({
        id: 'r',
        trigger: { task: 'go' },
        events: [{ type: 'trigger', data: { task: 'go' } }],
      })
      assert.deepEqual(
        (await store.listRunEvents('r')).map((event) => [event.sequence, event.type, event.data]),
        [[1, 'trigger', { task: 'go' }]],
      )
      await store.appendRunEvents('r', [{ type: 'started' }])
      const done = await store.finishRun('r', {
        status: 'completed',
        value: 1,
        events: [{ type: 'finished', data: { status: 'completed' } }],
      })
      assert.equal(done.status, 'completed')
      assert.deepEqual(
        (await store.listRunEvents('r')).map((event) => [event.sequence, event.type]),
        [
          [1, 'trigger'],
          [2, 'started'],
          [3, 'finished'],
        ],
      )
      // A refused finish or admission writes none of its events.
      await rejectsWith(
        store.finishRun('r', { status: 'failed', events: [{ type: 'finished' }] }),
        'conflict',
      )
      await rejectsWith(store.admitRun({ id: 'r', events: [{ type: 'trigger' }] }), 'conflict')
      assert.equal((await store.listRunEvents('r')).length, 3)
      // A bad event refuses the whole write, before anything is written.
      await rejectsWith(store.admitRun({ id: 's', events: [{ type: '' }] }), 'invalid_input')
      assert.equal(await store.getRun('s'), undefined)
      await store.admitRun({ id: 't' })
      await rejectsWith(
        store.finishRun('t', { status: 'completed', events: [{ type: '' }] }),
        'invalid_input',
      )
      assert.equal((await store.getRun('t'))?.status, 'running')
    })
  })

  void describe('approvals and receipts', () => {
    void it('appends decisions and lists them in order, by tool and after a point', async () => {
      await using store = (await freshStore(harness)).store
      const entry = {
        time: '2026-01-01T00:00:00.000Z',
        tool: 'shell',
        inputDigest: 'sha256:01',
        decision: 'approved' as const,
        by: 'ada',
        summary: 'rm -rf build',
        reason: 'asked',
        access: 'workspace-write',
        dangerous: true,
        details: { rule: 'recursive-delete' },
      }
      const first = await store.recordApproval(entry)
      assert.deepEqual(first, { ...entry, sequence: first.sequence })
      await store.recordApproval({
        ...entry,
        tool: 'write_file',
        decision: 'denied',
        dangerous: false,
      })
      await store.recordApproval({
        time: entry.time,
        tool: 'shell',
        inputDigest: 'sha256:02',
        decision: 'approved-for-session',
        by: 'bob',
      })
      const all = await store.listApprovals()
      assert.deepEqual(
        all.map((record) => [record.tool, record.decision]),
        [
          ['shell', 'approved'],
          ['write_file', 'denied'],
          ['shell', 'approved-for-session'],
        ],
      )
      assert.equal(all[1]?.dangerous, false)
      assert.equal('summary' in (all[2] ?? {}), false)
      assert.equal((await store.listApprovals({ tool: 'shell' })).length, 2)
      assert.deepEqual(
        (await store.listApprovals({ after: first.sequence })).map((record) => record.by),
        ['ada', 'bob'],
      )
    })

    void it('appends receipts and lists them by Run', async () => {
      await using store = (await freshStore(harness)).store
      const receipt = await store.recordReceipt({
        time: '2026-01-01T00:00:00.000Z',
        kind: 'files-write',
        tool: 'write_file',
        runId: 'r1',
        line: 'r1',
        digest: 'sha256:ff',
        details: { paths: ['a.txt'] },
      })
      await store.recordReceipt({
        time: '2026-01-01T00:00:01.000Z',
        kind: 'line-merge',
        runId: 'r2',
      })
      assert.deepEqual(await store.listReceipts({ runId: 'r1' }), [receipt])
      assert.equal((await store.listReceipts()).length, 2)
    })
  })
}
