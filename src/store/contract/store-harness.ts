/**
 * @module store/contract/store-harness
 * What the contract suite needs from a backend: fresh, empty stores on demand, and a clock
 * and ids that make results deterministic.
 */
import { openStore } from '../open-store.ts'
import type { Store } from '../store.ts'
import type { StoreDependencies } from '../store-dependencies.ts'

/** One backend under test. */
export interface StoreHarness {
  readonly name: string
  /** The URL of a fresh, empty database. Valid once the suite's `before` hooks have run. */
  freshUrl(): Promise<string>
}

/** A clock that ticks one millisecond a reading from 2026-01-01, and ids t-1, t-2, … */
export function testDependencies(): StoreDependencies {
  let tick = 0
  let id = 0
  return {
    now: () => new Date(Date.UTC(2026, 0, 1) + tick++),
    newTaskId: () => `t-${++id}`,
  }
}

/** A fresh store with deterministic clock and ids, and its URL for reopening. */
export async function freshStore(harness: StoreHarness): Promise<{ store: Store; url: string }> {
  const url = await harness.freshUrl()
  return { store: await openStore(url, { dependencies: testDependencies() }), url }
}
