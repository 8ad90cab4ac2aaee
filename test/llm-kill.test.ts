/**
 * A model Run whose process is killed with SIGKILL while its model call is in flight: the next
 * process to open the same store ends it `failed` with reason `unknown-outcome` (the call may
 * have been paid for and acted on; nobody knows) and never calls the model again. The real
 * `eitri run` process talks to a fake model API on loopback that holds the call open; the
 * positive control is the same Run left alone, which completes on one call.
 */
import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { UNKNOWN_OUTCOME_REASON } from '../src/store/run-record.ts'
import { runEitri } from './helpers/eitri-process.ts'
import {
  SHORT_LEASES,
  assertUnknownModelCall,
  killLeftover,
  runningJournal,
  settledRun,
  startRun,
} from './helpers/killed-run.ts'
import { startModelWireServer, type WireReply } from './helpers/model-wire-server.ts'
import { makeScratch } from './helpers/scratch.ts'
import { writeModelConfig } from './helpers/llm-cli-setup.ts'

describe('a model Run whose process is killed mid-call', () => {
  for (const killed of [true, false]) {
    it(
      killed
        ? 'is failed as unknown-outcome by the next process, its journal ending on the model-call intent, and the model is never called again'
        : 'control: left alone, the same Run completes on its one model call',
      async () => {
        const reply: WireReply = killed
          ? { kind: 'hold' }
          : { kind: 'text', text: 'Nothing to do.', usage: { input: 50, output: 5 } }
        await using server = await startModelWireServer([reply])
        await using scratch = await makeScratch({ 'README.md': '# project\n' })
        const { flags, url } = await writeModelConfig(scratch, server.openaiURL, {
          extra: { runs: SHORT_LEASES },
        })
        const { child, ended } = startRun('writer', 'look around', flags)
        try {
          await server.received(1)
          if (killed) {
            // While the call is held the Run is running, its journal open on the intent.
            assert.equal((await runningJournal(url)).at(-1)?.type, 'model-call-intent')
            child.kill('SIGKILL')
          }
          const run = await ended
          if (!killed) {
            assert.equal(run.status, 0, run.stderr)
            assert.equal(run.stdout, 'Nothing to do.\n')
          } else assert.equal(child.signalCode, 'SIGKILL', run.stderr)
        } finally {
          killLeftover(child)
        }
        // Past the dead owner's lease, a new process on the same state sweeps.
        const { row, journal } = await settledRun(url, flags, killed)
        const types = journal.map((event) => event.type)
        if (killed) {
          assertUnknownModelCall(row)
          // The last entry is the sweep's own ending; before it, the intent left by the call.
          assert.equal(types.at(-2), 'model-call-intent', types.join(', '))
          assert.deepEqual(journal.at(-1)?.data, {
            status: 'failed',
            reason: UNKNOWN_OUTCOME_REASON,
          })
          // Another process opening the store, later, re-runs nothing either.
          const again = await runEitri(['runs', 'show', row.id, ...flags])
          assert.equal(again.status, 0, again.stderr)
          assert.match(again.stdout, /unknown-outcome/)
        } else {
          assert.deepEqual([row.status, row.settlementStatus], ['completed', 'merged'])
          assert.ok(types.includes('model-call-result'), types.join(', '))
        }
        assert.equal(server.requests.length, 1, 'exactly one model call, never re-run')
      },
    )
  }
})
