/**
 * @module store/store-dependencies
 * What a store takes from outside: a clock and an id source, injectable for tests.
 */
import { randomBytes } from 'node:crypto'

/** The clock and ids a store uses. */
export interface StoreDependencies {
  /** @default the system clock */
  readonly now: () => Date
  /** New task ids. @default `t-` and 10 random hex digits */
  readonly newTaskId: () => string
}

/** The defaults, with any given replacements. */
export function storeDependencies(given: Partial<StoreDependencies> = {}): StoreDependencies {
  return {
    now: given.now ?? (() => new Date()),
    newTaskId: given.newTaskId ?? (() => `t-${randomBytes(5).toString('hex')}`),
  }
}
