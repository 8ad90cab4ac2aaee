import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { decideSettlement, type SettlementFacts } from './settlement-decision.ts'

/** A step in one word: need-changes, need-approval, merge, or STATUS/REASON/WORLD. */
function shortly(facts: SettlementFacts): string {
  const step = decideSettlement(facts)
  return step.type === 'settle' ? `${step.status}/${step.reason}/${step.world}` : step.type
}

const done = { status: 'completed', policy: 'automatic' } as const
const changed = { ...done, changes: 2, intoMain: false } as const
const toMain = { ...done, changes: 2, intoMain: true } as const

describe('decideSettlement', () => {
  const rows: [string, SettlementFacts, string][] = [
    ['failed is discarded', { status: 'failed', policy: 'automatic' }, 'discarded/failed/discard'],
    [
      'cancelled is discarded, whatever the policy',
      { status: 'cancelled', policy: 'review' },
      'discarded/cancelled/discard',
    ],
    [
      'waiting goes to review and keeps the world',
      { status: 'waiting', policy: 'automatic' },
      'review/execution-waiting/keep',
    ],
    [
      'waiting beats the discard policy',
      { status: 'waiting', policy: 'discard' },
      'review/execution-waiting/keep',
    ],
    ['policy discard', { status: 'completed', policy: 'discard' }, 'discarded/policy/discard'],
    [
      'policy review keeps the fork',
      { status: 'completed', policy: 'review' },
      'review/policy/keep',
    ],
    ['automatic first looks at the changes', done, 'need-changes'],
    [
      'no changes: merged without asking',
      { ...done, changes: 0, intoMain: true },
      'merged/no-changes/discard',
    ],
    ['changes into a fork merge without asking', changed, 'merge'],
    ['changes into main ask a person first', toMain, 'need-approval'],
    ['approved: merge', { ...toMain, approval: { type: 'approved' } }, 'merge'],
    [
      'refused by the person: review',
      { ...toMain, approval: { type: 'refused', reason: 'not now' } },
      'review/approval-refused: not now/keep',
    ],
    [
      'nobody to ask: review',
      { ...toMain, approval: { type: 'unavailable', reason: 'no terminal' } },
      'review/approval-unavailable: no terminal/keep',
    ],
    ['merged', { ...changed, merge: { type: 'merged' } }, 'merged/automatic/keep'],
    [
      'the parent held it all already',
      { ...changed, merge: { type: 'nothing' } },
      'merged/no-changes/discard',
    ],
    [
      'a conflict: review, naming the paths',
      { ...changed, merge: { type: 'conflict', paths: ['a.txt', 'b.txt'] } },
      'review/merge-conflict: a.txt, b.txt/keep',
    ],
    [
      "main's policy refused: review",
      { ...toMain, approval: { type: 'approved' }, merge: { type: 'refused', reason: 'x: no' } },
      'review/merge-refused: x: no/keep',
    ],
    [
      'main changed on disk: review',
      {
        ...toMain,
        approval: { type: 'approved' },
        merge: { type: 'changed-on-disk', paths: ['a'] },
      },
      'review/changed-on-disk: a/keep',
    ],
    [
      'the merge threw: review',
      { ...changed, merge: { type: 'error', message: 'boom' } },
      'review/automatic-merge-failed: boom/keep',
    ],
  ]
  for (const [name, facts, expected] of rows) {
    it(name, () => assert.equal(shortly(facts), expected))
  }
})
