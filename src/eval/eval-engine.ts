/**
 * @module eval/eval-engine
 * What runs model-written code: an engine makes sessions, a session evaluates code with its
 * definitions kept from one eval to the next. isolated-vm is the engine today; any other (QuickJS
 * in a worker) must pass the same contract suite (`engine-contract.ts`).
 */
import type { EvalOutcome } from './eval-outcome.ts'

/** What an engine guarantees beyond the contract every engine keeps. */
export interface EvalEngineCapabilities {
  /** Definitions survive a timeout (guest code is interrupted, its heap kept). */
  readonly keepsStateOnTimeout: boolean
  /**
   * Definitions survive a cancel that arrives while guest code computes. Every engine keeps
   * them when the cancel arrives while the guest waits on a capability; each outcome says.
   */
  readonly keepsStateOnCancel: boolean
  /** The memory limit is enforced per session. */
  readonly enforcesMemoryLimit: boolean
  /** TypeScript input is accepted (types stripped, never checked). */
  readonly acceptsTypeScript: boolean
}

/** The capability namespaces a session's guest sees: namespace → function names. */
export type NamespaceList = Readonly<Record<string, readonly string[]>>

/**
 * Runs one capability call for the guest. `args` is plain JSON, already validated; the answer
 * must be plain JSON, or a `JsonAnswer` (JSON already made, see `json-answer.ts`), whose `delivered` the engine
 * calls once the sandbox has it or it is dropped. A thrown `EitriError` reaches the guest as an
 * error with its code and message (never a stack or a host path).
 */
export type CapabilityHandler = (
  namespace: string,
  name: string,
  args: readonly unknown[],
  signal: AbortSignal,
) => Promise<unknown>

/** Options of {@link EvalEngine.createSession}. */
export interface CreateSessionOptions {
  /** Heap limit of the session. */
  readonly memoryLimitMb: number
  /** The namespaces the guest gets as globals. */
  readonly namespaces: NamespaceList
  readonly signal?: AbortSignal
}

/** Options of one eval. */
export interface EvalOptions {
  /** Wall-clock limit of the whole eval, capability calls and what runs after them included. */
  readonly timeoutMs: number
  /** Cancels the eval; it answers `cancelled` within a second. */
  readonly signal?: AbortSignal
  /** Serves the guest's capability calls; without it every call is refused. */
  readonly capabilities?: CapabilityHandler
}

/** One session of an engine: an isolate whose global definitions persist between evals. */
export interface EngineSession extends AsyncDisposable {
  readonly id: string
  /**
   * Why this session can no longer evaluate (its state is gone), or undefined while it can.
   */
  readonly lost: SessionLoss | undefined
  /** Evaluates JavaScript or TypeScript; never throws for what the guest does. */
  eval(code: string, options: EvalOptions): Promise<EvalOutcome>
  /** Frees the session. Idempotent. */
  dispose(): Promise<void>
}

/** Why a session's state was lost. */
export type SessionLoss =
  'sandbox_reset' | 'memory_limit' | 'timeout' | 'cancelled' | 'idle' | 'evicted' | 'closed'

/** An engine: makes sessions. */
export interface EvalEngine extends AsyncDisposable {
  readonly name: string
  readonly capabilities: EvalEngineCapabilities
  /** @throws EitriError `sandbox_reset` when the engine cannot start a session. */
  createSession(options: CreateSessionOptions): Promise<EngineSession>
  /** Ends every session and what hosts them. Idempotent. */
  close(): Promise<void>
}
