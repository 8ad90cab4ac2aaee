/**
 * @module eitri
 * The public library. Every export is listed by name; a test pins this list.
 */
export { ERROR_CODES, EitriError, type ErrorCode } from './errors/eitri-error.ts'
export {
  defineTool,
  TOOL_NAME_PATTERN,
  type JsonSchema,
  type Tool,
  type ToolDefinitionInput,
  type ToolParameters,
} from './tool/define-tool.ts'
export type { SandboxMode, ToolGovernance } from './tool/tool-governance.ts'
export {
  toolError,
  toolSuccess,
  type ToolError,
  type ToolMetadata,
  type ToolResult,
  type ToolSuccess,
} from './tool/tool-result.ts'
export type { ToolContext } from './tool/tool-context.ts'
export type {
  EntryStat,
  EntryType,
  WalkEntry,
  WalkOptions,
  WorkspaceCallOptions,
  WorkspaceView,
  WriteReceipt,
} from './ports/workspace-view.ts'
export { ToolRegistry } from './tool/tool-registry.ts'
export {
  CANCELLED_BEFORE_EXECUTION,
  Toolset,
  type OfferedTool,
  type ToolCall,
} from './tool/toolset.ts'
export { estimateTokens, MAX_RESULT_TOKENS, truncateResult } from './tool/truncate.ts'
export {
  decidePath,
  WORKSPACE_MOUNT,
  type PathDecision,
  type PathIntent,
  type PathLookup,
} from './access/path-policy.ts'
export { DEFAULT_PROTECTED_PATHS } from './access/protected-paths.ts'
export { createWorkspaceView, type WorkspaceViewOptions } from './access/confined-workspace.ts'
export { DirectoryTree } from './workspace/directory-tree.ts'
export {
  editFileTool,
  fileTools,
  globTool,
  grepTool,
  readFileTool,
  writeFileTool,
} from './tools/files/index.ts'
export { builtInTools } from './tools/built-in-tools.ts'
export {
  createMcpServer,
  toCallToolResult,
  type McpServerOptions,
} from './mcp/create-mcp-server.ts'
export { serveHttp, type HttpServeOptions, type HttpServing } from './mcp/serve-http.ts'
export { serveStdio } from './mcp/serve-stdio.ts'
export {
  openWorkshop,
  type SessionOptions,
  type Workshop,
  type WorkshopOptions,
  type WorkshopSession,
} from './workshop/workshop.ts'
export type { Principal } from './workspace/fork-owner.ts'
export { confine, type ConfinedToolIdentity, type ConfineToolOptions } from './confine/confine.ts'
export type { ConfineOptions } from './confine/confine-options.ts'
export type { ConfinedCall, ConfinedFunction, ModuleExport } from './confine/confined-function.ts'
export type {
  Executor,
  ExecutorCall,
  ExecutorReport,
  ExecutorRunOptions,
  ExecutorStatus,
} from './confine/executors/executor.ts'
export { inlineExecutor } from './confine/executors/inline-executor.ts'
export {
  processExecutor,
  type ProcessExecutorOptions,
} from './confine/executors/process-executor.ts'
export { jailExecutor, type ConfiningJail } from './confine/executors/jail-executor.ts'
export type { SandboxMetadata } from './confine/sandbox-answer.ts'
export { Jail, type JailOptions, type JailRequest, type JailResult } from './jail/jail.ts'
export { JailProgramSession } from './jail/jail-program-session.ts'
export { CommandPolicy } from './access/command-policy/command-policy.ts'
export type { CommandJudgement } from './access/command-policy/command-judgement.ts'
export { shellKillTool, shellOutputTool, shellTool, shellTools } from './tools/shell/index.ts'
export { evalTools, jsEvalTool } from './tools/eval/index.ts'
export type {
  CodeEvaluator,
  EvalAnswer,
  EvalFailure,
  EvalFailureCode,
  EvalOutcome,
  EvalRequest,
  EvalValue,
} from './ports/code-evaluator.ts'
export type {
  CapabilityHandler,
  CreateSessionOptions,
  EngineSession,
  EvalEngine,
  EvalEngineCapabilities,
  EvalOptions,
  NamespaceList,
  SessionLoss,
} from './eval/eval-engine.ts'
export { IsolateEngine, type IsolateEngineOptions } from './eval/host/isolate-engine.ts'
export type { SandboxConfinement } from './eval/host/sandbox-confinement.ts'
export { EvalPool, EvalOwner, type EvalPoolOptions } from './eval/eval-pool.ts'
export {
  capabilityFunction,
  type Capability,
  type CapabilityFunction,
  type CapabilityScope,
} from './eval/capability.ts'
export type { CapabilitySettings, SecretBinding } from './eval/capability-settings.ts'
export type { EvaluationOptions } from './workshop/eval-sandbox.ts'
export type { AccessContext, AccessLevel, CommandVerdict } from './ports/access-context.ts'
export type {
  JobRead,
  ProgramAvailability,
  ProgramRequest,
  ProgramRun,
  ProgramSession,
} from './ports/program-session.ts'
export { createAccess, type CreateAccessOptions } from './access/create-access.ts'
export { SessionAccess, type AccessOptions } from './access/session-access.ts'
export type {
  ApprovalDecision,
  ApprovalPolicy,
  ApprovalRequest,
  Approver,
} from './access/approval.ts'
export type { ApprovalRecord, ApprovalRecorder } from './access/approval-log.ts'
export { DEFAULT_MODE, PLAN_MODE, type ModeDefinition } from './access/modes.ts'
export { exitPlanModeTool, modeGetTool, modeSetTool } from './tools/modes/mode-tools.ts'
export { openStore, type OpenStoreOptions } from './store/open-store.ts'
export type { Store, StoreBackend, StoreCallOptions } from './store/store.ts'
export type { StoreDependencies } from './store/store-dependencies.ts'
export {
  MAIN_LINE,
  type LineRecord,
  type LineState,
  type MergeConflict,
  type MergeOptions,
  type MergeReport,
} from './store/line-record.ts'
export type {
  RunAdmission,
  RunEvent,
  RunFilter,
  RunFinish,
  RunFinishStatus,
  RunProvenance,
  RunRecord,
  RunSettlement,
  RunStatus,
  SettlementStatus,
} from './store/run-record.ts'
export type {
  ApprovalEntry,
  ApprovalRecord as StoredApproval,
  AuditFilter,
  ReceiptEntry,
  ReceiptRecord,
} from './store/audit-records.ts'
export {
  TASK_PRIORITIES,
  TASK_STATUSES,
  type NewTask,
  type Task,
  type TaskBoard,
  type TaskChanges,
  type TaskPriority,
  type TaskStatus,
} from './ports/task-board.ts'
export type {
  KnowledgeBase,
  KnowledgeEntry,
  KnowledgeHit,
  KnowledgeLinks,
  KnowledgeWrite,
} from './ports/knowledge-base.ts'
export { taskCreateTool, taskListTool, taskTools, taskUpdateTool } from './tools/tasks/index.ts'
export {
  knowledgeAddTool,
  knowledgeLinksTool,
  knowledgeSearchTool,
  knowledgeTools,
} from './tools/knowledge/index.ts'
