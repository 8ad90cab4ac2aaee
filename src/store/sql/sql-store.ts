/**
 * @module store/sql/sql-store
 * The Store over a SQL driver: the logic both backends share.
 */
import { EitriError } from '../../errors/eitri-error.ts'
import type { Store } from '../store.ts'
import type { StoreDependencies } from '../store-dependencies.ts'
import { migrate, schemaVersion } from './migrate.ts'
import { sqlKnowledgeBase } from './sql-knowledge-base.ts'
import { discardLine, forkLine, getLine, listLines, mergeLine } from './sql-lines.ts'
import type { SqlDriver } from './sql-driver.ts'
import {
  admitRun,
  appendRunEvents,
  finishRun,
  getRun,
  listRunEvents,
  listRuns,
  settleRun,
} from './sql-runs.ts'
import {
  holdRun,
  listCancelRequests,
  releaseRunLeases,
  renewRunLeases,
  requestRunCancel,
  sweepInterruptedRuns,
} from './sql-run-leases.ts'
import {
  appendChatMessages,
  getRunMetrics,
  listChatMessages,
  recordRunMetrics,
} from './sql-run-trace.ts'
import { appendRunStep } from './sql-run-step.ts'
import { listApprovals, listReceipts, recordApproval, recordReceipt } from './sql-audit.ts'
import { sqlTaskBoard } from './sql-task-board.ts'

/**
 * Migrates the database behind `driver` and answers a Store on it. On any failure the driver
 * is closed, so nothing is left half-open.
 */
export async function openSqlStore(
  driver: SqlDriver,
  dependencies: StoreDependencies,
): Promise<Store> {
  try {
    await migrate(driver)
  } catch (error) {
    await driver.close().catch(() => undefined)
    if (EitriError.isInstance(error)) throw error
    throw new EitriError(
      'store_unavailable',
      `Cannot prepare the store at ${driver.location}: ${(error as Error).message}`,
      { cause: error },
    )
  }
  return sqlStore(driver, dependencies)
}

function sqlStore(driver: SqlDriver, dependencies: StoreDependencies): Store {
  const close = () => driver.close()
  return {
    backend: driver.dialect,
    location: driver.location,
    tasks: (line) => sqlTaskBoard(driver, line, dependencies),
    knowledge: (line) => sqlKnowledgeBase(driver, line, dependencies),
    forkLine: (parent, child, options) => forkLine(driver, dependencies, parent, child, options),
    mergeLine: (child, options) => mergeLine(driver, dependencies, child, options),
    discardLine: (child, options) => discardLine(driver, dependencies, child, options),
    getLine: (name, options) => getLine(driver, name, options),
    listLines: (options) => listLines(driver, options),
    admitRun: (admission, options) => admitRun(driver, dependencies, admission, options),
    finishRun: (id, finish, options) => finishRun(driver, dependencies, id, finish, options),
    settleRun: (id, settlement, options) =>
      settleRun(driver, dependencies, id, settlement, options),
    getRun: (id, options) => getRun(driver, id, options),
    listRuns: (filter, options) => listRuns(driver, filter, options),
    appendRunEvents: (runId, events, options) =>
      appendRunEvents(driver, dependencies, runId, events, options),
    listRunEvents: (runId, filter, options) => listRunEvents(driver, runId, filter, options),
    holdRun: (id, lease, options) => holdRun(driver, dependencies, id, lease, options),
    renewRunLeases: (lease, options) => renewRunLeases(driver, dependencies, lease, options),
    releaseRunLeases: (owner, ids, options) =>
      releaseRunLeases(driver, dependencies, owner, ids, options),
    sweepInterruptedRuns: (options) => sweepInterruptedRuns(driver, dependencies, options),
    requestRunCancel: (id, by, options) => requestRunCancel(driver, dependencies, id, by, options),
    listCancelRequests: (owner, options) => listCancelRequests(driver, owner, options),
    recordRunMetrics: (runId, metrics, options) =>
      recordRunMetrics(driver, dependencies, runId, metrics, options),
    getRunMetrics: (runId, options) => getRunMetrics(driver, runId, options),
    appendChatMessages: (chatId, runId, messages, options) =>
      appendChatMessages(driver, dependencies, chatId, runId, messages, options),
    appendRunStep: (runId, step, options) =>
      appendRunStep(driver, dependencies, runId, step, options),
    listChatMessages: (chatId, options) => listChatMessages(driver, chatId, options),
    recordApproval: (entry, options) => recordApproval(driver, entry, options),
    listApprovals: (filter, options) => listApprovals(driver, filter, options),
    recordReceipt: (entry, options) => recordReceipt(driver, entry, options),
    listReceipts: (filter, options) => listReceipts(driver, filter, options),
    schemaVersion: (options) => schemaVersion(driver, options),
    close,
    [Symbol.asyncDispose]: close,
  }
}
