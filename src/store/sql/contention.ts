/**
 * @module store/sql/contention
 * Retrying a transaction the database turned away because another one held what it needed.
 */
import { EitriError } from '../../errors/eitri-error.ts'
import { pause as wait } from '../../util/pause.ts'

/** First pause after contention; doubles up to `MAX_PAUSE_MS`. */
const FIRST_PAUSE_MS = 5
const MAX_PAUSE_MS = 250
/** How long a transaction keeps retrying before it gives up. */
export const CONTENTION_DEADLINE_MS = 60_000

/**
 * Runs `attempt` until it succeeds, retrying while `isContention` says the failure was
 * contention, with growing, jittered pauses. Honors `signal` between attempts.
 */
export async function retryOnContention<T>(
  attempt: () => Promise<T>,
  isContention: (error: unknown) => boolean,
  options: { readonly signal?: AbortSignal | undefined; readonly location: string },
): Promise<T> {
  const deadline = Date.now() + CONTENTION_DEADLINE_MS
  let pause = FIRST_PAUSE_MS
  for (;;) {
    throwIfCancelled(options.signal)
    try {
      return await attempt()
    } catch (error) {
      if (!isContention(error)) throw error
      if (Date.now() >= deadline) {
        throw new EitriError(
          'store_unavailable',
          `The store at ${options.location} stayed busy for ${CONTENTION_DEADLINE_MS / 1000} s: another process holds it. Try again, or stop the process that keeps it locked.`,
          { cause: error },
        )
      }
      await wait(pause * (0.5 + Math.random()), options.signal)
      pause = Math.min(pause * 2, MAX_PAUSE_MS)
    }
  }
}

/** Throws `cancelled` when `signal` has aborted. */
export function throwIfCancelled(signal: AbortSignal | undefined): void {
  if (signal?.aborted === true) {
    throw new EitriError('cancelled', 'The store operation was cancelled before it started.')
  }
}
