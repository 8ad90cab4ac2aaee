/**
 * @module agent/run-composition
 * Composing Runs on AbortSignal: wait for all (`join`), take the first and stop the rest
 * (`race`), or run work over many items a few at a time (`map`). A contender is a handle (the
 * owner's wait: losing cancels the Run) or a wait function such as {@link observer} (a passive
 * wait: losing only stops waiting, so a Run others share keeps running).
 */
import { EitriError } from '../errors/eitri-error.ts'
import type { RunHandle } from './run-handle.ts'
import type { RunResult } from './run-result.ts'

/** A wait on a Run: called with a signal that aborts when the wait is no longer wanted. */
export type RunWait = (signal: AbortSignal) => Promise<RunResult>

/** What `join` and `race` take: a handle (its owner's wait) or a wait of one's own. */
export type RunContender = RunHandle | RunWait

/** The options of every composition. */
export interface CompositionOptions {
  /** Aborting it ends the composition; owned Runs are cancelled. */
  readonly signal?: AbortSignal | undefined
}

/** A passive wait on `handle`: losing a race stops the wait and leaves the Run running. */
export function observer(handle: RunHandle): RunWait {
  return (signal) => handle.result({ signal })
}

function waitOf(contender: RunContender): RunWait {
  return typeof contender === 'function' ? contender : (signal) => contender.ownedResult({ signal })
}

/** A signal of its own that also aborts with `outer`. */
function linked(outer: AbortSignal | undefined): {
  controller: AbortController
  signal: AbortSignal
} {
  const controller = new AbortController()
  return {
    controller,
    signal: outer === undefined ? controller.signal : AbortSignal.any([outer, controller.signal]),
  }
}

/**
 * Every contender's result, in order. When one wait fails (a passive wait aborted), the others
 * are aborted (owned Runs cancelled) and the failure is thrown once they have stopped.
 *
 * @example
 * const [a, b] = await join([await runtime.hire(roster, 'echo', { task: 'x' }), other])
 */
export async function join(
  contenders: readonly RunContender[],
  options: CompositionOptions = {},
): Promise<RunResult[]> {
  const { controller, signal } = linked(options.signal)
  const waits = contenders.map((contender) => waitOf(contender)(signal))
  try {
    return await Promise.all(waits)
  } catch (error) {
    controller.abort(error)
    await Promise.allSettled(waits)
    throw error
  }
}

/** Another name for {@link join}. */
export const all = join

/**
 * The result of the first contender to finish. Every other one is aborted (an owned Run is
 * cancelled) and waited for until it has stopped and settled, so nothing the race started
 * outlives it.
 *
 * @throws EitriError `invalid_input` for no contenders; the first wait's failure, if one fails.
 */
export async function race(
  contenders: readonly RunContender[],
  options: CompositionOptions = {},
): Promise<RunResult> {
  if (contenders.length === 0)
    throw new EitriError('invalid_input', 'A race needs at least one Run; give it handles.')
  const entrants = contenders.map((contender) => {
    const { controller, signal } = linked(options.signal)
    return { controller, wait: waitOf(contender)(signal) }
  })
  const stopAll = async (except: number | undefined, reason: unknown) => {
    entrants.forEach((entrant, index) => {
      if (index !== except) entrant.controller.abort(reason)
    })
    await Promise.allSettled(entrants.map((entrant) => entrant.wait))
  }
  let winner: { index: number; result: RunResult }
  try {
    winner = await Promise.race(
      entrants.map((entrant, index) => entrant.wait.then((result) => ({ index, result }))),
    )
  } catch (error) {
    await stopAll(undefined, error)
    throw error
  }
  await stopAll(winner.index, new EitriError('cancelled', 'This Run lost a race.'))
  return winner.result
}

/**
 * `work` applied to every item, at most `concurrency` at a time, results in the items' order.
 * The first failure aborts the rest (through the signal `work` gets) and is thrown.
 *
 * @throws EitriError `invalid_input` for a concurrency that is not a positive whole number.
 */
export async function map<Item, Result>(
  items: readonly Item[],
  work: (item: Item, signal: AbortSignal, index: number) => Promise<Result>,
  options: CompositionOptions & { readonly concurrency?: number | undefined } = {},
): Promise<Result[]> {
  const concurrency = options.concurrency ?? 4
  if (!Number.isInteger(concurrency) || concurrency < 1) {
    throw new EitriError(
      'invalid_input',
      `concurrency must be a positive whole number (got ${String(concurrency)}).`,
    )
  }
  const { controller, signal } = linked(options.signal)
  const results: Result[] = new Array<Result>(items.length)
  let next = 0
  let failure: { error: unknown } | undefined
  const worker = async () => {
    while (next < items.length && !signal.aborted) {
      const index = next
      next += 1
      try {
        results[index] = await work(items[index] as Item, signal, index)
      } catch (error) {
        failure ??= { error }
        controller.abort(error)
        return
      }
    }
  }
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker))
  if (failure !== undefined) throw failure.error
  if (signal.aborted) throw new EitriError('cancelled', 'The map was cancelled.')
  return results
}
