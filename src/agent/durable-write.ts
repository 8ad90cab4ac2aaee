/**
 * @module agent/durable-write
 * Writing what must not be lost (a Run's terminal row) while the store refuses for a while:
 * the write is retried, 25 ms doubling to 5 s between tries, until it lands or the caller
 * gives up. Until then the caller keeps the Run running and its result unresolved, so nobody
 * hears of an end that the store does not hold.
 */
import { EitriError } from '../errors/eitri-error.ts'
import { pause as wait } from '../util/pause.ts'

/** Options of {@link durableWrite}. */
export interface DurableWriteOptions {
  /** Stops retrying; the write then rejects with `cancelled`. */
  readonly signal?: AbortSignal | undefined
  /** The first pause, doubled after each failure. @default 25 */
  readonly firstDelayMs?: number
  /** The longest pause. @default 5000 */
  readonly maxDelayMs?: number
  /** Told of the first failure, then at most once per `logEveryMs` while it keeps failing. */
  readonly log?: ((message: string, error: unknown) => void) | undefined
  /** @default 60000 */
  readonly logEveryMs?: number
}

/** What a JavaScript engine throws for a bug in the caller: retrying cannot help. */
const PROGRAMMING_ERRORS = [TypeError, RangeError, ReferenceError, SyntaxError]

/**
 * Whether a failed store write may land if tried again. `store_unavailable` (the store stayed
 * busy, the server is unreachable or refuses connections) and the raw errors a database
 * driver throws (a connection cut, an I/O error, a full disk) may pass; an answer about the
 * write itself (`conflict`, `not_found`, `invalid_input`), a closed store (`not_available`:
 * it never reopens) and a cancellation never change by waiting.
 */
export function isRetryableStoreError(error: unknown): boolean {
  if (EitriError.isInstance(error)) return error.code === 'store_unavailable'
  return !PROGRAMMING_ERRORS.some((type) => error instanceof type)
}

/**
 * Runs `write` until it succeeds, retrying while its failure {@link isRetryableStoreError}.
 * `write` gets the store call options to pass on: its signal aborts with the caller's.
 *
 * @throws the first error that is not retryable; EitriError `cancelled` once `signal` aborts
 *   (its cause is the last failure).
 * @example
 * const row = await durableWrite((call) => store.finishRun(id, finish, call), {
 *   signal: teardown.signal,
 *   log: (message) => console.error(message),
 * })
 */
export async function durableWrite<T>(
  write: (call: { readonly signal?: AbortSignal }) => Promise<T>,
  options: DurableWriteOptions = {},
): Promise<T> {
  const first = options.firstDelayMs ?? 25
  const longest = options.maxDelayMs ?? 5_000
  const logEvery = options.logEveryMs ?? 60_000
  let pause = first
  let failures = 0
  let loggedAt: number | undefined
  let last: unknown
  const call = options.signal === undefined ? {} : { signal: options.signal }
  for (;;) {
    if (aborted(options.signal)) throw stopped(failures, last)
    try {
      return await write(call)
    } catch (error) {
      if (aborted(options.signal)) throw stopped(failures, error)
      if (!isRetryableStoreError(error)) throw error
      last = error
      failures += 1
      const now = Date.now()
      if (loggedAt === undefined || now - loggedAt >= logEvery) {
        loggedAt = now
        options.log?.(
          `A store write that must land failed ${failures} time(s); retrying in ${pause} ms, until it lands: ${(error as Error).message}`,
          error,
        )
      }
      await wait(pause, options.signal)
      pause = Math.min(pause * 2, longest)
    }
  }
}

function aborted(signal: AbortSignal | undefined): boolean {
  return signal?.aborted === true
}

function stopped(failures: number, cause: unknown): EitriError {
  return new EitriError(
    'cancelled',
    `The durable store write was cancelled after ${failures} failed attempt(s); it did not land.`,
    { cause },
  )
}
