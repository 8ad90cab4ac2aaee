/**
 * @module confine/confine-options
 * The options of `confine`, their defaults, and their checks, made when the tool is defined so
 * a wrong one fails at startup rather than at the first call.
 */
import path from 'node:path'
import { parentEnvironment } from '../config/environment.ts'
import { EitriError } from '../errors/eitri-error.ts'
import { SANDBOX_MODES, type SandboxMode } from '../tool/tool-governance.ts'
import type { Executor } from './executors/executor.ts'
import { processExecutor } from './executors/process-executor.ts'

export { SANDBOX_MODES }
/** The wall-clock limit of a confined call when none is given. */
export const DEFAULT_CONFINE_TIMEOUT_MS = 30_000
/** The most bytes a confined call answers when nothing else is said. */
export const DEFAULT_CONFINE_MAX_BYTES = 1_000_000

/** How a tool is confined. */
export interface ConfineOptions {
  /** @default 'read-only' */
  readonly mode?: SandboxMode
  /** @default 30,000 */
  readonly timeoutMs?: number
  /** @default 1,000,000 */
  readonly maxBytes?: number
  /** Absolute host paths writes may land in, besides the scratch folder in `tempdir` mode. */
  readonly allowPaths?: readonly string[]
  /**
   * `minimal` (the default): only `PATH`, `HOME`, `LANG` and `TMPDIR`. `inherit` is UNSAFE: it
   * hands the function the parent's whole environment, tokens and keys included; the jail
   * refuses it.
   */
  readonly env?: 'minimal' | 'inherit'
  /** With `env: 'inherit'`: the environment to pass. @default the parent's whole environment */
  readonly inheritedEnvironment?: Readonly<Record<string, string>>
  /** Where the call runs. @default processExecutor(); required in `container` mode */
  readonly executor?: Executor
  /** Where scratch folders are made. @default os.tmpdir() */
  readonly temporaryRoot?: string
}

/** The options with their defaults, checked. */
export interface ConfineSettings {
  readonly mode: SandboxMode
  readonly timeoutMs: number
  readonly maxBytes: number
  readonly allowPaths: readonly string[]
  readonly executor: Executor
  readonly temporaryRoot: string | undefined
  /** Undefined for the minimal environment. */
  readonly inheritedEnvironment: (() => Readonly<Record<string, string>>) | undefined
}

/**
 * Applies the defaults and checks each option for the tool `name`.
 *
 * @throws EitriError `invalid_definition` naming the option and what it must be.
 */
export function confineSettings(name: string, options: ConfineOptions): ConfineSettings {
  const refuse = (reason: string): never => {
    throw new EitriError('invalid_definition', `confine('${name}'): ${reason}.`)
  }
  const mode = options.mode ?? 'read-only'
  if (!SANDBOX_MODES.includes(mode)) refuse(`mode must be one of ${SANDBOX_MODES.join(', ')}`)
  const timeoutMs = options.timeoutMs ?? DEFAULT_CONFINE_TIMEOUT_MS
  if (!Number.isFinite(timeoutMs) || timeoutMs <= 0) refuse('timeoutMs must be a positive number')
  const maxBytes = options.maxBytes ?? DEFAULT_CONFINE_MAX_BYTES
  if (!Number.isSafeInteger(maxBytes) || maxBytes <= 0)
    refuse('maxBytes must be a positive integer')
  const allowPaths = [...(options.allowPaths ?? [])]
  for (const allowed of allowPaths) {
    if (typeof allowed !== 'string' || !path.isAbsolute(allowed))
      refuse(`allowPaths must be absolute host paths, not ${JSON.stringify(allowed)}`)
  }
  const env = options.env ?? 'minimal'
  if (env !== 'minimal' && env !== 'inherit') refuse("env must be 'minimal' or 'inherit'")
  if (mode === 'container' && options.executor === undefined) {
    refuse(
      'container mode needs an explicit executor that confines the call, such as jailExecutor(jail); none was given',
    )
  }
  const executor = options.executor ?? processExecutor()
  if (env === 'inherit' && !executor.allowsInheritedEnvironment) {
    refuse(
      `the ${executor.name} executor never passes the parent's environment in: use env 'minimal'`,
    )
  }
  const given = options.inheritedEnvironment
  return {
    mode,
    timeoutMs,
    maxBytes,
    allowPaths: allowPaths.map((allowed) => path.resolve(allowed)),
    executor,
    temporaryRoot: options.temporaryRoot,
    inheritedEnvironment: env === 'minimal' ? undefined : () => given ?? parentEnvironment(),
  }
}
