/**
 * @module tool/call-checkpoints
 * Snapshots around the calls that may change the user's live folder (main), so whatever such a
 * call does can be restored. A tool declares which line of work a call may change (`changes`
 * in `defineTool`); the session decides whether that line is main and takes the snapshots.
 */
import type { ToolResult } from './tool-result.ts'

/** A call that may change a line of the workspace. */
export interface CheckpointCall {
  readonly tool: string
  /** The validated input. */
  readonly input: unknown
  /** The line it may change: `main` or a fork id. */
  readonly line: string
}

/** Takes the snapshots around calls that may change main. */
export interface CallCheckpoints {
  /**
   * Runs `work` (the call) between a snapshot before and one after, when `call.line` is main;
   * otherwise just runs it. Throws, without running `work`, when the snapshot before fails.
   */
  around(call: CheckpointCall, work: () => Promise<ToolResult>): Promise<ToolResult>
}
