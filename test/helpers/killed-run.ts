/**
 * Test support for killing an `eitri run` process with SIGKILL mid-Run and looking at what
 * the next process makes of its Run: short leases so the dead owner's lapses within a test,
 * the Run's journal while it runs, and the Run once swept.
 */
import assert from 'node:assert/strict'
import { spawn, type ChildProcess } from 'node:child_process'
import { setTimeout as delay } from 'node:timers/promises'
import { openStore } from '../../src/store/open-store.ts'
import {
  UNKNOWN_OUTCOME_REASON,
  type RunEvent,
  type RunRecord,
} from '../../src/store/run-record.ts'
import { EITRI_BIN, finished, runEitri, type Finished } from './eitri-process.ts'

/** Short leases, so the killed process's Run lapses within the test. */
export const LEASE_MS = 1_500

/** The `runs` configuration that gives a Run those short leases, and sweeps often. */
export const SHORT_LEASES = { leaseTtlMs: LEASE_MS, heartbeatMs: 300, sweepMs: 400 }

/** Starts `eitri run --agent AGENT --task TASK --yes FLAGS`, its stdin closed. */
export function startRun(
  agent: string,
  task: string,
  flags: readonly string[],
): { child: ChildProcess; ended: Promise<Finished> } {
  const child = spawn(
    process.execPath,
    [EITRI_BIN, 'run', '--agent', agent, '--task', task, '--yes', ...flags],
    { stdio: 'pipe' },
  )
  child.stdin.end()
  return { child, ended: finished(child) }
}

/** Kills `child` if it is still alive, so a failed assertion leaves no process behind. */
export function killLeftover(child: ChildProcess): void {
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL')
}

/** The journal of the store's one Run, which must be running. */
export async function runningJournal(url: string): Promise<RunEvent[]> {
  await using store = await openStore(url)
  const [running] = await store.listRuns()
  assert.equal(running?.status, 'running')
  return await store.listRunEvents(running.id)
}

/**
 * The store's one Run and its journal. With `sweep`, first waits past the dead owner's lease
 * and has a new `eitri runs` process on the same state sweep it.
 */
export async function settledRun(
  url: string,
  flags: readonly string[],
  sweep: boolean,
): Promise<{ row: RunRecord; journal: RunEvent[] }> {
  if (sweep) {
    await delay(LEASE_MS + 200)
    const list = await runEitri(['runs', '--json', ...flags])
    assert.equal(list.status, 0, list.stderr)
  }
  await using store = await openStore(url)
  const [row] = await store.listRuns()
  assert.ok(row !== undefined)
  return { row, journal: await store.listRunEvents(row.id) }
}

/** Asserts the Run was ended as of unknown outcome on a model call, which is not re-run. */
export function assertUnknownModelCall(row: RunRecord): void {
  assert.deepEqual([row.status, row.reason], ['failed', UNKNOWN_OUTCOME_REASON])
  assert.match(
    (row.error as { message: string }).message,
    /ends on a model-call-intent with no result.*not re-run/,
  )
}
