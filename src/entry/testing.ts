/**
 * @module eitri/testing
 * The contract suites (node:test) a store, an eval engine or an executor of your own must pass,
 * and a tool context for testing a tool that needs no workspace. Loads node:test: import it
 * from tests only.
 */
export { storeContract, type StoreHarness } from '../store/store-contract.ts'
export { engineContract } from '../eval/engine-contract.ts'
export { executorContract } from '../confine/executors/executor-contract.ts'
export { contextWith, noWorkspace } from '../tool/test-context.ts'
