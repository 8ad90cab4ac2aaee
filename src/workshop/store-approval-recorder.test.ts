import assert from 'node:assert/strict'
import { it } from 'node:test'
import { openStore } from '../store/open-store.ts'
import { storeApprovalRecorder } from './store-approval-recorder.ts'

it('records the access layer’s decisions in the store and lists them back as written', async () => {
  await using store = await openStore('sqlite::memory:')
  const recorder = storeApprovalRecorder(store)
  const decision = {
    time: '2026-01-01T00:00:00.000Z',
    tool: 'shell',
    inputDigest: 'sha256:ab',
    summary: 'git push',
    decision: 'denied' as const,
    by: 'ada',
    reason: 'not now',
    access: 'workspace-write',
    dangerous: false,
  }
  await recorder.record(decision)
  const { reason: _reason, ...withoutReason } = decision
  await recorder.record({ ...withoutReason, decision: 'approved' })
  assert.deepEqual(await recorder.list(), [decision, { ...withoutReason, decision: 'approved' }])
  assert.equal((await store.listApprovals({ tool: 'shell' })).length, 2)
})
