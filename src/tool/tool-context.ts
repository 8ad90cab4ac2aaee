/**
 * @module tool/tool-context
 * What one tool call receives besides its input.
 */
import type { AccessContext } from './access-context.ts'
import type { CallCheckpoints } from './call-checkpoints.ts'
import type { DriveAccess } from './drive-access.ts'
import type { LineControl } from './line-control.ts'
import type { CodeEvaluator } from './code-evaluator.ts'
import type { KnowledgeBase } from './knowledge-base.ts'
import type { ProgramSession } from './program-session.ts'
import type { TaskBoard } from './task-board.ts'
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
  /** The access in force; absent means the default, `workspace-write`, with no command policy. */
  readonly access?: AccessContext
  /** The workspace's blob drive; absent without versioning. */
  readonly drive?: DriveAccess
  /** The lines of work (main and forks) this session can use; absent without versioning. */
  readonly lines?: LineControl
  /** Where programs run, confined; absent when this caller may not run programs. */
  readonly programs?: ProgramSession
  /** Where model-written code runs (the caller's own eval sessions); absent when it may not. */
  readonly evaluator?: CodeEvaluator<ToolContext>
  /** The tasks of the workspace's line, kept in the store; absent when there is no store. */
  readonly tasks?: TaskBoard
  /** The knowledge of the workspace's line, kept in the store; absent when there is no store. */
  readonly knowledge?: KnowledgeBase
  /**
   * Snapshots main around calls whose tool declares it may change it; absent without
   * versioning, and inside such a call (the calls it makes are covered by its snapshots).
   */
  readonly checkpoints?: CallCheckpoints
}
