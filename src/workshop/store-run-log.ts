/**
 * @module workshop/store-run-log
 * The tools' read-only view of Runs, kept in the store. Listing first sweeps: a Run whose
 * owner died (its lease lapsed) is marked `failed`/`interrupted`, so nobody reads a dead Run
 * as running.
 */
import { EitriError } from '../errors/eitri-error.ts'
import type { RunLog } from '../ports/run-log.ts'
import { RUN_STATUSES, type RunStatus } from '../store/run-record.ts'
import type { Store } from '../store/store.ts'

/** A RunLog reading `store`. */
export function storeRunLog(store: Store): RunLog {
  return {
    async list(filter = {}, options = {}) {
      const status = runStatus(filter.status)
      await store.sweepInterruptedRuns(options)
      return store.listRuns({ status, parentId: filter.parentId }, options)
    },
    get: (id, options = {}) => store.getRun(id, options),
    events: (id, options = {}) => store.listRunEvents(id, {}, options),
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
