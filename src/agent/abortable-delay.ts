/**
 * @module agent/abortable-delay
 * Waiting that a cancellation cuts short at once: a slow program stands in for long work, and a
 * cancelled Run must stop promptly, not when its timer would have fired.
 */
import { EitriError } from '../errors/eitri-error.ts'

/**
 * Resolves after `ms`, or rejects with `cancelled` as soon as `signal` aborts (at once when it
 * already has).
 */
export function abortableDelay(ms: number, signal: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    const cancelled = () =>
      new EitriError('cancelled', 'The Run was cancelled while it waited.', {
        cause: signal.reason,
      })
    if (signal.aborted) {
      reject(cancelled())
      return
    }
    const timer = setTimeout(() => {
      signal.removeEventListener('abort', onAbort)
      resolve()
    }, ms)
    const onAbort = () => {
      clearTimeout(timer)
      reject(cancelled())
    }
    signal.addEventListener('abort', onAbort, { once: true })
  })
}
