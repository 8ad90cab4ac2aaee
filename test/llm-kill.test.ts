/**
 * A model Run whose process is killed with SIGKILL while its model call is in flight: the next
 * process to open the same store ends it `failed` with reason `unknown-outcome` (the call may
 * have been paid for and acted on; nobody knows) and never calls the model again. The real
 * `eitri run` process talks to a fake model API on loopback that holds the call open; the
 * positive control is the same Run left alone, which completes on one call.
 */
import assert from 'node:assert/strict'
import { spawn } from 'node:child_process'
import { describe, it } from 'node:test'
import { setTimeout as delay } from 'node:timers/promises'
import { openStore } from '../src/store/open-store.ts'
import { UNKNOWN_OUTCOME_REASON } from '../src/store/run-record.ts'
import { EITRI_BIN, finished, runEitri } from './helpers/eitri-process.ts'
import { startModelWireServer, type WireReply } from './helpers/model-wire-server.ts'
import { makeScratch } from './helpers/scratch.ts'
import { writeModelConfig } from './helpers/llm-cli-setup.ts'

/** Short leases, so the killed process's Run lapses within the test. */
const LEASE_MS = 1_500

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
          extra: { runs: { leaseTtlMs: LEASE_MS, heartbeatMs: 300, sweepMs: 400 } },
        })
        const child = spawn(
          process.execPath,
          [EITRI_BIN, 'run', '--agent', 'writer', '--task', 'look around', '--yes', ...flags],
          { stdio: 'pipe' },
        )
        child.stdin.end()
        const ended = finished(child)
        try {
          await server.received(1)
          if (killed) {
            {
              // While the call is held the Run is running, its journal open on the intent.
              await using store = await openStore(url)
              const [running] = await store.listRuns()
              assert.equal(running?.status, 'running')
              const journal = await store.listRunEvents(running.id)
              assert.equal(journal.at(-1)?.type, 'model-call-intent')
            }
            child.kill('SIGKILL')
          }
          const run = await ended
          if (!killed) {
            assert.equal(run.status, 0, run.stderr)
            assert.equal(run.stdout, 'Nothing to do.\n')
          } else assert.equal(child.signalCode, 'SIGKILL', run.stderr)
        } finally {
          if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
        }
        if (killed) {
          // Past the dead owner's lease, a new process on the same state sweeps.
          await delay(LEASE_MS + 200)
          const list = await runEitri(['runs', '--json', ...flags])
          assert.equal(list.status, 0, list.stderr)
        }
        await using store = await openStore(url)
        const [row] = await store.listRuns()
        assert.ok(row !== undefined)
        const journal = await store.listRunEvents(row.id)
        const types = journal.map((event) => event.type)
        if (killed) {
          assert.deepEqual([row.status, row.reason], ['failed', UNKNOWN_OUTCOME_REASON])
          assert.match(
            (row.error as { message: string }).message,
            /ends on a model-call-intent with no result.*not re-run/,
          )
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
