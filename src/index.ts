/**
 * @module eitri
 * The public library, `eitri`: define tools, open a workshop and call its tools, the results
 * and errors they answer, the built-in tools, access settings, and the types a tool's context
 * offers. Assembling the parts yourself (an MCP server, a store, an eval engine, the jail,
 * confined functions) and the contract suites are subpaths, in src/entry/ (`eitri/mcp`, …).
 * Every export is listed by name; a test pins each entry's list.
 */
export { ERROR_CODES, EitriError, type ErrorCode } from './errors/eitri-error.ts'

// Tools: their definition, results, context, registry and offer to a model.
export {
  defineTool,
  TOOL_NAME_PATTERN,
  type JsonSchema,
  type LineChanges,
  type Tool,
  type ToolDefinitionInput,
  type ToolParameters,
} from './tool/define-tool.ts'
export { SANDBOX_MODES, type SandboxMode, type ToolGovernance } from './tool/tool-governance.ts'
export {
  toolError,
  toolSuccess,
  type ToolError,
  type ToolMetadata,
  type ToolResult,
  type ToolSuccess,
} from './tool/tool-result.ts'
export type { ToolContext } from './tool/tool-context.ts'
export type { CallCheckpoints, CheckpointCall } from './tool/call-checkpoints.ts'
export { ToolRegistry } from './tool/tool-registry.ts'
export {
  CANCELLED_BEFORE_EXECUTION,
  Toolset,
  type OfferedTool,
  type ToolCall,
} from './tool/toolset.ts'
export { estimateTokens, MAX_RESULT_TOKENS, truncateResult } from './tool/truncate.ts'

// What a tool's context offers.
export type {
  ContentSource,
  EntryStat,
  EntryType,
  FileContent,
  ReadBounds,
  ReadOptions,
  WalkEntry,
  WalkOptions,
  WorkspaceCallOptions,
  WorkspaceView,
  WriteReceipt,
} from './ports/workspace-view.ts'
export {
  ACCESS_LEVELS,
  type AccessContext,
  type AccessLevel,
  type ApprovalAnswer,
  type CommandAuthorization,
  type CommandFinding,
  type CommandJudgement,
  type CommandPart,
  type CommandVerdict,
  type ModeChange,
  type ModeControl,
  type PathAction,
  type PathAuthorization,
  type PathChange,
} from './ports/access-context.ts'
export type {
  JobRead,
  ProgramAvailability,
  ProgramMemory,
  ProgramRequest,
  ProgramRun,
  ProgramSession,
} from './ports/program-session.ts'
export type {
  CodeEvaluator,
  EvalAnswer,
  EvalFailure,
  EvalFailureCode,
  EvalOutcome,
  EvalRequest,
  EvalValue,
} from './ports/code-evaluator.ts'
export {
  TASK_PRIORITIES,
  TASK_STATUSES,
  type NewTask,
  type Task,
  type TaskBoard,
  type TaskCallOptions,
  type TaskChanges,
  type TaskPriority,
  type TaskStatus,
} from './ports/task-board.ts'
export type {
  KnowledgeBase,
  KnowledgeCallOptions,
  KnowledgeEntry,
  KnowledgeHit,
  KnowledgeLinks,
  KnowledgeWrite,
} from './ports/knowledge-base.ts'
export type { DriveAccess, DriveEntry, DriveFile } from './ports/drive-access.ts'
export type { RunEventView, RunLog, RunLogCallOptions, RunView } from './ports/run-log.ts'
export type {
  AgentChoice,
  AgentRuns,
  HireCall,
  RosterSource,
  RunOutcome,
  RunWaitOptions,
  RunWaitOutcome,
} from './ports/agent-runs.ts'
export type {
  BudgetBreakdown,
  BudgetCheck,
  BudgetEstimate,
  BudgetLine,
  ModelRun,
} from './ports/model-run.ts'
export {
  LINE_STATES,
  MAIN_LINE,
  type LineChangeInfo,
  type LineConflictInfo,
  type LineControl,
  type LineInfo,
  type LineMergeInfo,
  type LineOverviewInfo,
  type LineState,
  type LineSwitch,
  type LineWriteIntent,
  type RestoredRef,
  type RestoreInfo,
  type RestoreOutcome,
  type SnapshotInfo,
} from './ports/line-control.ts'

// A workspace view of a folder, for a toolset without a workshop.
export {
  createWorkspaceView,
  type ConfinedWorkspace,
  type WorkspaceViewOptions,
} from './access/confined-workspace.ts'
export { DirectoryTree } from './workspace/directory-tree.ts'
export type { DirectoryEntry, WorkspaceTree } from './workspace/workspace-tree.ts'

// The workshop.
export {
  openWorkshop,
  type SessionOptions,
  type Workshop,
  type WorkshopOptions,
  type WorkshopSession,
} from './workshop/workshop.ts'
export type { EvaluationOptions } from './workshop/eval-sandbox.ts'
export type { Principal } from './workspace/fork-owner.ts'
export { configSchema, type EitriConfig } from './config/config-file.ts'
export type { EitriEnvironment } from './config/environment.ts'

// Access: levels, modes, rules and approval.
export { createAccess, type CreateAccessOptions } from './access/create-access.ts'
export { SessionAccess, type AccessOptions } from './access/session-access.ts'
export {
  APPROVAL_POLICIES,
  type ApprovalDecision,
  type ApprovalPolicy,
  type ApprovalRequest,
  type Approver,
} from './access/approval.ts'
export type { ApprovalRecord, ApprovalRecorder } from './access/approval-log.ts'
export { DEFAULT_MODE, PLAN_MODE, type ModeDefinition } from './access/modes.ts'
export {
  PermissionRules,
  type PermissionRule,
  type RuleSubject,
} from './access/permission-rules.ts'
export { CommandPolicy, type CommandRequest } from './access/command-policy/command-policy.ts'
export type { CommandRule } from './access/command-policy/command-judgement.ts'

// The built-in tools.
export { builtInTools } from './tools/built-in-tools.ts'
export {
  editFileTool,
  fileTools,
  globTool,
  grepTool,
  readFileTool,
  writeFileTool,
} from './tools/files/index.ts'
export { shellKillTool, shellOutputTool, shellTool, shellTools } from './tools/shell/index.ts'
export { evalTools, jsEvalTool } from './tools/eval/index.ts'
export { exitPlanModeTool, modeGetTool, modeSetTool } from './tools/modes/mode-tools.ts'
export { taskCreateTool, taskListTool, taskTools, taskUpdateTool } from './tools/tasks/index.ts'
export {
  knowledgeAddTool,
  knowledgeLinksTool,
  knowledgeSearchTool,
  knowledgeTools,
} from './tools/knowledge/index.ts'
