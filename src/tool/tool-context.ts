/**
 * @module tool/tool-context
 * What one tool call receives besides its input.
 */
import type { WorkspaceView } from './workspace-view.ts'

/**
 * The context of one call. Later layers add the access in force, the approver and the run;
 * each is declared here as an interface and implemented above.
 */
export interface ToolContext {
  /** Aborts when the caller cancels; a tool stops promptly and cleans up. */
  readonly signal: AbortSignal
  /** The workspace line this call acts on. */
  readonly workspace: WorkspaceView
}
