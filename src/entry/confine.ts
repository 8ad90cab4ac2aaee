/**
 * @module eitri/confine
 * A function of your own as a confined tool: run in process, in a child process or in the jail.
 */
export { confine, type ConfinedToolIdentity, type ConfineToolOptions } from '../confine/confine.ts'
export type { ConfineOptions } from '../confine/confine-options.ts'
export type {
  ConfinedCall,
  ConfinedFunction,
  ConfinedTarget,
  ModuleExport,
} from '../confine/confined-function.ts'
export type {
  Executor,
  ExecutorCall,
  ExecutorReport,
  ExecutorRunOptions,
  ExecutorStatus,
} from '../confine/executors/executor.ts'
export { inlineExecutor } from '../confine/executors/inline-executor.ts'
export {
  processExecutor,
  type ProcessExecutorOptions,
} from '../confine/executors/process-executor.ts'
export {
  jailExecutor,
  type ConfiningJail,
  type ConfiningJailBind,
} from '../confine/executors/jail-executor.ts'
export type { SandboxMetadata } from '../confine/sandbox-answer.ts'
