/**
 * @module eval/capability
 * A capability is a namespace of async functions the guest gets as a global (`fs`, `tools`,
 * `http`, …). Each function declares its arguments as a zod tuple (checked on the host before
 * it runs), its signature and what it does, so `sandbox.overview()` and `sandbox.doc()` can
 * describe every capability to the model that uses it.
 */
import type { z } from 'zod'
import type { ToolContext } from '../tool/tool-context.ts'
import type { Toolset } from '../tool/toolset.ts'
import type { ByteBudget, CallReservation } from './byte-budget.ts'
import type { CapabilitySettings } from './capability-settings.ts'

/** What one eval's capability calls act with. */
export interface EvalScope {
  /** The js_eval call's context, with a signal that aborts when the eval ends. */
  readonly ctx: ToolContext
  /** The tools `tools.call` may run (never js_eval itself). */
  readonly toolset: Toolset | undefined
  readonly settings: CapabilitySettings
  /** Counts this eval's calls against its budgets. */
  readonly usage: { toolCalls: number }
  /** The bytes this eval's calls may hold at once. */
  readonly budget: ByteBudget
}

/** What one capability call acts with: its eval's scope and its own reservation. */
export interface CapabilityScope extends Omit<EvalScope, 'budget'> {
  /**
   * What this call holds of the eval's byte budget. A call that reads data reserves its size
   * here before reading; it is given back once the answer reached the sandbox.
   */
  readonly bytes: CallReservation
}

/** One function of a capability. */
export interface CapabilityFunction {
  readonly name: string
  /** As the guest calls it: `readFile(path: string): Promise<string>`. */
  readonly signature: string
  readonly description: string
  /** The positional arguments; a trailing `undefined` argument may be left out. */
  readonly parameters: z.ZodTuple
  readonly run: (args: never, scope: CapabilityScope) => Promise<unknown>
}

/** A namespace of functions. */
export interface Capability {
  readonly name: string
  /** One sentence: what the namespace is for. */
  readonly purpose: string
  /** A short snippet that uses it. */
  readonly example: string
  readonly functions: readonly CapabilityFunction[]
  /**
   * What the guest calls, when a library in the guest stands between it and `functions` (the
   * `agent` namespace's roster values and handles): described instead of the raw functions.
   */
  readonly surface?: readonly { readonly signature: string; readonly description: string }[]
}

/**
 * Defines one function, typing `run`'s arguments from the schema.
 *
 * @example
 * const exists = capabilityFunction({
 *   name: 'exists',
 *   signature: 'exists(path: string): Promise<boolean>',
 *   description: 'Whether a path exists.',
 *   parameters: z.tuple([z.string()]),
 *   run: async ([path], { ctx }) => (await ctx.workspace.stat(path)) !== undefined,
 * })
 */
export function capabilityFunction<Parameters extends z.ZodTuple>(definition: {
  readonly name: string
  readonly signature: string
  readonly description: string
  readonly parameters: Parameters
  readonly run: (args: z.output<Parameters>, scope: CapabilityScope) => Promise<unknown>
}): CapabilityFunction {
  return definition
}
