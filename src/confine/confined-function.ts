/**
 * @module confine/confined-function
 * What a confined call runs: a function, named by module and export so that another process
 * can load it, or (in process only) a closure.
 */
import path from 'node:path'
import { pathToFileURL } from 'node:url'

/** What a confined function receives besides its input. */
export interface ConfinedCall {
  /**
   * The call's scratch folder, where it may write in `tempdir` mode. Out of process it is also
   * the working folder and `HOME`; in the jail it is `/scratch`.
   */
  readonly workdir: string
  /** Aborts at the deadline or on cancellation in process; a child process is killed instead. */
  readonly signal: AbortSignal
  /**
   * Reports a file written outside the scratch folder. Only the inline executor listens: the
   * process and jail executors find what was written themselves and never trust this.
   */
  readonly reportWrite: (path: string) => void
}

/**
 * A confined function: takes the tool's validated input and answers a value, which becomes the
 * result's content (a string as is, anything else as JSON).
 */
export type ConfinedFunction = (input: never, call: ConfinedCall) => unknown

/** A function (or a tool) exported by a module, so a child process can load it by name. */
export interface ModuleExport {
  /** The module: a `file:` URL (`import.meta.resolve('./x.ts')`) or an absolute path. */
  readonly module: string | URL
  /** The export's name; `default` for the default export. */
  readonly export: string
}

/** What an executor runs: a closure (in process only) or a module's export. */
export type ConfinedTarget =
  | { readonly type: 'function'; readonly function: ConfinedFunction }
  | { readonly type: 'module'; readonly module: string; readonly export: string }

/** True for a `{ module, export }` reference. */
export function isModuleExport(value: unknown): value is ModuleExport {
  if (typeof value !== 'object' || value === null) return false
  const { module, export: name } = value as Partial<ModuleExport>
  return (typeof module === 'string' || module instanceof URL) && typeof name === 'string'
}

/**
 * The `file:` URL of a module reference, or undefined when it is neither a `file:` URL nor an
 * absolute path.
 */
export function moduleUrl(module: string | URL): string | undefined {
  const text = module instanceof URL ? module.href : module
  if (text.startsWith('file:')) return new URL(text).href
  return path.isAbsolute(text) ? pathToFileURL(text).href : undefined
}
