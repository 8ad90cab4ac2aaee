/**
 * @module confine/executors/executor
 * The contract every executor keeps: run one confined call and report what it answered,
 * printed and wrote, and how it ended. Expected outcomes (a timeout, a failing function) are
 * reported, not thrown.
 */
import type { ConfinedTarget } from '../confined-function.ts'

/** How a confined call ended. */
export type ExecutorStatus = 'ok' | 'timeout' | 'error'

/** One call for an executor. */
export interface ExecutorCall {
  readonly target: ConfinedTarget
  /** The validated input; out of process it travels as JSON. */
  readonly input: unknown
  /** The call's fresh scratch folder on the host, created and removed by the caller. */
  readonly workdir: string
  readonly timeoutMs: number
  /** The most bytes of the function's printed output kept; the rest is dropped and counted. */
  readonly maxOutputBytes: number
  /**
   * The environment to pass through as is (`env: 'inherit'`). Absent: the minimal one, `PATH`,
   * `HOME` (the scratch folder), `LANG` and `TMPDIR`, and nothing of the parent's.
   */
  readonly inheritedEnvironment?: Readonly<Record<string, string>> | undefined
}

/** Options of {@link Executor.run}. */
export interface ExecutorRunOptions {
  /** Cancels the call: the executor stops the function (kills its processes) and reports. */
  readonly signal?: AbortSignal | undefined
}

/** What an executor reports about one call. */
export interface ExecutorReport {
  /** What the function printed on its standard output (empty in process). */
  readonly stdout: string
  /** What the function answered; undefined unless `status` is `ok`. */
  readonly result: unknown
  /**
   * Files written, path → sha256 (hex). Paths under the scratch folder are relative to it;
   * others are absolute host paths. An empty hash means the file no longer exists.
   */
  readonly files: Readonly<Record<string, string>>
  readonly status: ExecutorStatus
  /** Why the call failed or stopped. */
  readonly error?: string
}

/** Where a confined function runs. */
export interface Executor {
  /** `inline`, `process`, `jail`, or a custom executor's name. */
  readonly name: string
  /** True when the function runs in another process, so it must be named by module and export. */
  readonly outOfProcess: boolean
  /** True when this executor may pass the parent's environment through (`env: 'inherit'`). */
  readonly allowsInheritedEnvironment: boolean
  /**
   * Runs one call. Throws only for faults of the executor itself (an `EitriError` keeps its
   * code, such as `jail_unavailable`); what the function does is reported.
   */
  run(call: ExecutorCall, options?: ExecutorRunOptions): Promise<ExecutorReport>
}
