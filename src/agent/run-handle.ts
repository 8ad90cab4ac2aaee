/**
 * @module agent/run-handle
 * What `hire` answers: a handle on one Run, valid in the runtime that hired it. Waiting comes in
 * two kinds, because a race must know whether losing means the Run is no longer wanted: a
 * passive wait (`result`) only stops waiting; the owner's wait (`ownedResult`) cancels the Run.
 */
import type { RunRecord } from '../store/run-record.ts'
import type { RunResult } from './run-result.ts'

/** The durable projection of a Run: its row, the causes recorded since, and its children. */
export interface RunObservation extends RunRecord {
  /** The ids of the Runs it hired, newest first. */
  readonly children: readonly string[]
}

/** A handle on one Run. */
export interface RunHandle {
  readonly id: string
  /**
   * The Run's result once it has stopped and settled. Many may wait; aborting `signal` ends
   * this wait only (it rejects with `cancelled`), never the Run.
   */
  result(options?: { readonly signal?: AbortSignal | undefined }): Promise<RunResult>
  /**
   * The owner's wait: aborting `signal` cancels the Run, and the promise then resolves with the
   * Run's final result once it has stopped and settled.
   */
  ownedResult(options?: { readonly signal?: AbortSignal | undefined }): Promise<RunResult>
  /** The Run as the store holds it now. */
  observe(options?: { readonly signal?: AbortSignal | undefined }): Promise<RunObservation>
  /**
   * Cancels the Run (its children first) and waits for it to stop. False when it had ended
   * already.
   */
  cancel(): Promise<boolean>
}
