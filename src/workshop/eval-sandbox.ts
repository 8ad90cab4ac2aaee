/**
 * @module workshop/eval-sandbox
 * The workshop's code sandbox: one pool of eval sessions for the whole server, its capabilities
 * configured from the configuration file, the isolated-vm engine started at the first eval
 * (its process inside bubblewrap, with the workshop's `bwrap`).
 */
import type { EitriConfig } from '../config/config-file.ts'
import { environmentValue } from '../config/environment.ts'
import { keyVariables } from '../config/models-config.ts'
import type { Capability } from '../eval/capability.ts'
import type { EvalEngine } from '../eval/eval-engine.ts'
import { rosterRules } from '../agent/roster-value-rules.ts'
import { agentCapability } from '../eval/capabilities/agent-capability.ts'
import { defaultCatalog } from '../eval/capabilities/default-capabilities.ts'
import { DEFAULT_TOOL_CALL_BUDGET } from '../eval/eval-limits.ts'
import { EvalPool } from '../eval/eval-pool.ts'
import { IsolateEngine } from '../eval/host/isolate-engine.ts'
import type { SandboxConfinement } from '../eval/host/sandbox-confinement.ts'
import type { Toolset } from '../tool/toolset.ts'

/** How the workshop's code sandbox runs. Every field has a default. */
export interface EvaluationOptions {
  /** Makes the engine. @default isolated-vm in a sandbox process inside bubblewrap */
  readonly engine?: () => EvalEngine
  /**
   * Where the default engine's sandbox process runs. `none` runs it without bubblewrap, the
   * isolate its only wall: only for a host where bubblewrap cannot run, and only from code (the
   * configuration file cannot set it). @default 'bubblewrap'
   */
  readonly confinement?: SandboxConfinement
  /** Sessions alive at once. @default 16 */
  readonly maxSessions?: number
  /** @default 30 minutes */
  readonly idleTimeoutMs?: number
  /** Heap limit per session. @default 128 */
  readonly memoryLimitMb?: number
  /** @default 60 000 */
  readonly defaultTimeoutMs?: number
  /** `tools.call` calls per eval. @default 100 */
  readonly toolCallBudget?: number
  /** Reads the server's environment for granted names, secrets and model keys. @default this process's */
  readonly readVariable?: (name: string) => string | undefined
  /** More capability namespaces. */
  readonly extraCapabilities?: readonly Capability[]
  /**
   * Lets `http.fetch` reach loopback addresses. For tests of the real request path only: the
   * configuration file cannot set it.
   */
  readonly testOnlyAllowLoopback?: boolean
}

/** The pool of a workshop with `config`, whose `tools.call` runs `toolset`. */
export function createEvalSandbox(
  config: EitriConfig,
  toolset: Toolset,
  options: EvaluationOptions = {},
  bwrap?: string,
): EvalPool {
  return new EvalPool({
    engine:
      options.engine ??
      (() =>
        new IsolateEngine({
          ...(options.confinement === undefined ? {} : { confinement: options.confinement }),
          ...(bwrap === undefined ? {} : { bwrap }),
        })),
    // `agent` checks rosters with the agent layer's own rules, which only the workshop reaches.
    catalog: defaultCatalog([agentCapability(rosterRules), ...(options.extraCapabilities ?? [])]),
    settings: {
      http: {
        allow: config.http.allow,
        maxResponseBytes: config.http.maxResponseBytes,
        timeoutMs: config.http.timeoutMs,
        testOnlyAllowLoopback: options.testOnlyAllowLoopback === true,
      },
      env: config.env,
      secrets: config.secrets,
      // Masked wherever the guest's answers could carry them, like secrets.
      keyVariables: [...keyVariables(config.providers).keys()],
      readVariable: options.readVariable ?? ((name) => environmentValue(name)),
      toolCallBudget: options.toolCallBudget ?? DEFAULT_TOOL_CALL_BUDGET,
    },
    toolset,
    maxSessions: options.maxSessions,
    idleTimeoutMs: options.idleTimeoutMs,
    memoryLimitMb: options.memoryLimitMb,
    defaultTimeoutMs: options.defaultTimeoutMs,
  })
}
