/**
 * @module eitri/eval
 * The JavaScript sandbox behind `js_eval`: the engine interface, the isolated-vm engine, the
 * pool of sessions and the capabilities a sandbox may call.
 */
export type {
  CapabilityHandler,
  CreateSessionOptions,
  EngineSession,
  EvalEngine,
  EvalEngineCapabilities,
  EvalOptions,
  NamespaceList,
  SessionLoss,
} from '../eval/eval-engine.ts'
export {
  IsolateEngine,
  IsolateEngineSession,
  type IsolateEngineOptions,
} from '../eval/host/isolate-engine.ts'
export type { SandboxConfinement } from '../eval/host/sandbox-confinement.ts'
export { EvalPool, EvalOwner, type EvalPoolOptions } from '../eval/eval-pool.ts'
export {
  capabilityFunction,
  type Capability,
  type CapabilityFunction,
  type CapabilityScope,
  type EvalScope,
} from '../eval/capability.ts'
export { CapabilityCatalog } from '../eval/capability-catalog.ts'
export { ByteBudget, CallReservation } from '../eval/byte-budget.ts'
export type { CapabilitySettings, SecretBinding } from '../eval/capability-settings.ts'
