/**
 * Pins the public export list: adding or removing an export is a decision, made here on purpose.
 */
import assert from 'node:assert/strict'
import { it } from 'node:test'
import * as eitri from '../src/index.ts'

it('exports exactly the public API', () => {
  assert.deepEqual(Object.keys(eitri).sort(), [
    'CANCELLED_BEFORE_EXECUTION',
    'CommandPolicy',
    'DEFAULT_MODE',
    'DEFAULT_PROTECTED_PATHS',
    'DirectoryTree',
    'EitriError',
    'Jail',
    'JailProgramSession',
    'MAX_RESULT_TOKENS',
    'PLAN_MODE',
    'SessionAccess',
    'TOOL_NAME_PATTERN',
    'ToolRegistry',
    'Toolset',
    'WORKSPACE_MOUNT',
    'builtInTools',
    'confine',
    'createAccess',
    'createMcpServer',
    'createWorkspaceView',
    'decidePath',
    'defineTool',
    'editFileTool',
    'estimateTokens',
    'exitPlanModeTool',
    'fileTools',
    'globTool',
    'grepTool',
    'inlineExecutor',
    'jailExecutor',
    'modeGetTool',
    'modeSetTool',
    'openWorkshop',
    'processExecutor',
    'readFileTool',
    'serveHttp',
    'serveStdio',
    'shellKillTool',
    'shellOutputTool',
    'shellTool',
    'shellTools',
    'toCallToolResult',
    'toolError',
    'toolSuccess',
    'truncateResult',
    'writeFileTool',
  ])
})
