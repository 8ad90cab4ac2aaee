/**
 * @module util/pause
 * Waiting a while between attempts, cut short by a signal.
 */

/**
 * Resolves after `milliseconds`, or at once when `signal` aborts (never rejects: the caller
 * checks the signal and says what was cancelled).
 */
export function pause(milliseconds: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted === true) return resolve()
    const done = (): void => {
      clearTimeout(timer)
      signal?.removeEventListener('abort', done)
      resolve()
    }
    const timer = setTimeout(done, milliseconds)
    signal?.addEventListener('abort', done, { once: true })
  })
}
