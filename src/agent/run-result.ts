/**
 * @module agent/run-result
 * What a Run's handle answers once the Run has stopped and settled, built from its durable row
 * so the answer and the store never disagree.
 */
import type { RunRecord, SettlementStatus } from '../store/run-record.ts'

/** What every result carries. */
interface RunResultBase {
  readonly id: string
  /** The fork the Run worked in. */
  readonly world: string | undefined
  readonly settlementStatus: SettlementStatus
  readonly settlementReason: string | null
}

/** A stopped and settled Run. */
export type RunResult = RunResultBase &
  (
    | { readonly status: 'completed'; readonly value: unknown; readonly output: string | null }
    | { readonly status: 'failed'; readonly error: unknown }
    | { readonly status: 'cancelled' }
    | { readonly status: 'waiting'; readonly reason: string | null }
  )

/** The result a Run's row says. A row still `running` has none. */
export function resultOfRecord(record: RunRecord): RunResult | undefined {
  const base = {
    id: record.id,
    world: record.world,
    settlementStatus: record.settlementStatus,
    settlementReason: record.settlementReason,
  }
  switch (record.status) {
    case 'completed':
      return { ...base, status: 'completed', value: record.value, output: record.output }
    case 'failed':
      return { ...base, status: 'failed', error: record.error }
    case 'cancelled':
      return { ...base, status: 'cancelled' }
    case 'waiting':
      return { ...base, status: 'waiting', reason: record.reason }
    case 'running':
      return undefined
  }
}
