/**
 * @module agent/run-handle
 * What `hire` answers: a handle on one Run, valid in the runtime that hired it. Waiting comes in
 * two kinds, because a race must know whether losing means the Run is no longer wanted: a
 * passive wait (`result`) only stops waiting; the owner's wait (`ownedResult`) cancels the Run.
 */
import { EitriError } from '../errors/eitri-error.ts'
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

/** What a handle is made of: the Run's settled result and the runtime's operations on it. */
export interface RunHandleParts {
  readonly id: string
  /** Resolves once the Run has stopped and settled. */
  readonly done: Promise<RunResult>
  /** Cancels the Run and waits until it has stopped and settled. */
  readonly stop: () => Promise<void>
  readonly cancel: () => Promise<boolean>
  readonly observe: RunHandle['observe']
  /** Called before a result is handed out (the consumer records the Run as a cause). */
  readonly consumed: () => Promise<void>
}

/** A frozen handle over `parts`. */
export function makeRunHandle(parts: RunHandleParts): RunHandle {
  const handOut = async (result: RunResult): Promise<RunResult> => {
    await parts.consumed()
    return result
  }
  return Object.freeze({
    id: parts.id,
    result: async (options: { readonly signal?: AbortSignal | undefined } = {}) =>
      handOut(await untilAborted(parts.done, options.signal)),
    ownedResult: async (options: { readonly signal?: AbortSignal | undefined } = {}) => {
      const signal = options.signal
      const onAbort = () => void parts.stop()
      signal?.addEventListener('abort', onAbort, { once: true })
      if (signal?.aborted === true) onAbort()
      try {
        return await handOut(await parts.done)
      } finally {
        signal?.removeEventListener('abort', onAbort)
      }
    },
    observe: parts.observe,
    cancel: parts.cancel,
  })
}

/** `promise`, or a `cancelled` rejection as soon as `signal` aborts. */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (signal === undefined) return promise
  if (signal.aborted) return Promise.reject(waitCancelled())
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(waitCancelled())
    signal.addEventListener('abort', onAbort, { once: true })
    promise.then(
      (value) => {
        signal.removeEventListener('abort', onAbort)
        resolve(value)
      },
      (error: unknown) => {
        signal.removeEventListener('abort', onAbort)
        reject(error instanceof Error ? error : new Error(String(error)))
      },
    )
  })
}

function waitCancelled(): EitriError {
  return new EitriError('cancelled', 'The wait was cancelled; the Run goes on.')
}
