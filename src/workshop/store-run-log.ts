/**
 * @module workshop/store-run-log
 * The tools' read-only view of Runs, kept in the store. Listing first sweeps: a Run whose
 * owner died (its lease lapsed) is marked `failed`/`interrupted`, so nobody reads a dead Run
 * as running.
 */
import { EitriError } from '../errors/eitri-error.ts'
import type { RunLog } from '../ports/run-log.ts'
import { RUN_STATUSES, type RunRecord, type RunStatus } from '../store/run-record.ts'
import type { Store, StoreCallOptions } from '../store/store.ts'
import { hiredWithin } from './run-fence.ts'

/**
 * A RunLog reading `store`: every Run, or with `hiredBy` only the Runs that session hired and
 * their children (run-fence.ts); another Run reads like one that does not exist.
 */
export function storeRunLog(store: Store, hiredBy?: string): RunLog {
  const seen = async (run: RunRecord | undefined, options: StoreCallOptions) =>
    run !== undefined &&
    (hiredBy === undefined || (await hiredWithin(store, run, hiredBy, options)))
  return {
    async list(filter = {}, options = {}) {
      const status = runStatus(filter.status)
      await store.sweepInterruptedRuns(options)
      const runs = await store.listRuns({ status, parentId: filter.parentId }, options)
      if (hiredBy === undefined) return runs
      const shown: RunRecord[] = []
      for (const run of runs) if (await seen(run, options)) shown.push(run)
      return shown
    },
    async get(id, options = {}) {
      const run = await store.getRun(id, options)
      return (await seen(run, options)) ? run : undefined
    },
    async events(id, options = {}) {
      if (!(await seen(await store.getRun(id, options), options))) return []
      return store.listRunEvents(id, {}, options)
    },
  }
}

/** @throws EitriError `invalid_input` naming the statuses when `status` is none of them. */
export function runStatus(status: string | undefined): RunStatus | undefined {
  if (status === undefined) return undefined
  const known = RUN_STATUSES.find((name) => name === status)
  if (known === undefined) {
    throw new EitriError(
      'invalid_input',
      `No Run status ${JSON.stringify(status)}; use one of ${RUN_STATUSES.join(', ')}.`,
    )
  }
  return known
}
