/**
 * @module store/store-contract
 * The one contract every Store keeps, run against SQLite and PostgreSQL alike.
 */
import { describe } from 'node:test'
import { knowledgeContract } from './contract/knowledge-contract.ts'
import { leaseContract } from './contract/lease-contract.ts'
import { lineContract } from './contract/line-contract.ts'
import { openingContract } from './contract/opening-contract.ts'
import { runContract } from './contract/run-contract.ts'
import type { StoreHarness } from './contract/store-harness.ts'
import { taskContract } from './contract/task-contract.ts'
import { traceContract } from './contract/trace-contract.ts'

export type { StoreHarness } from './contract/store-harness.ts'

/** Registers the whole store contract for one backend. */
export function storeContract(harness: StoreHarness): void {
  void describe(`store contract: ${harness.name}`, () => {
    openingContract(harness)
    taskContract(harness)
    knowledgeContract(harness)
    lineContract(harness)
    runContract(harness)
    leaseContract(harness)
    traceContract(harness)
  })
}
