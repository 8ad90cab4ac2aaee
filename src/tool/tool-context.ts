/**
 * @module tool/tool-context
 * What one tool call receives besides its input.
 */
import type { AccessContext } from '../ports/access-context.ts'
import type { AgentRuns } from '../ports/agent-runs.ts'
import type { CallCheckpoints } from './call-checkpoints.ts'
import type { DriveAccess } from '../ports/drive-access.ts'
import type { LineControl } from '../ports/line-control.ts'
import type { CodeEvaluator } from '../ports/code-evaluator.ts'
import type { ModelRun } from '../ports/model-run.ts'
import type { KnowledgeBase } from '../ports/knowledge-base.ts'
import type { ProgramSession } from '../ports/program-session.ts'
import type { RunLog } from '../ports/run-log.ts'
import type { TaskBoard } from '../ports/task-board.ts'
import type { WorkspaceView } from '../ports/workspace-view.ts'

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
  /** The Runs in the store, read-only; absent when there is no store. */
  readonly runs?: RunLog
  /** The agents this caller may hire and its own Runs; absent when it may not hire. */
  readonly agents?: AgentRuns
  /** The model Run this call runs in (its model and budget); absent outside one. */
  readonly modelRun?: ModelRun
  /**
   * Tells the caller how a long call is going (an MCP client that asked for progress); absent
   * when nobody listens.
   */
  readonly progress?: (update: {
    readonly progress: number
    readonly total?: number
    readonly message?: string
  }) => void
  /**
   * Snapshots main around calls whose tool declares it may change it; absent without
   * versioning, and inside such a call (the calls it makes are covered by its snapshots).
   */
  readonly checkpoints?: CallCheckpoints
}
