/**
 * @module provider/test-errors
 * For tests that look for a key in what an error shows.
 */
import assert from 'node:assert/strict'
import util from 'node:util'

/** Everything an error shows: message, cause chain and fields, as a log would print it. */
export function shown(error: unknown): string {
  return `${String(error)}\n${util.inspect(error, { depth: 12, showHidden: true })}`
}

/** The error `run` fails with; fails the test when it does not fail. */
export async function failure(run: () => Promise<unknown>): Promise<unknown> {
  try {
    await run()
  } catch (error) {
    return error
  }
  return assert.fail('expected the call to fail')
}
