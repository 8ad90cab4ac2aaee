/**
 * @module tools/runs
 * The Run tools: hire agents as Runs, wait for them, cancel and settle them, and read the Runs
 * (agent tasks and turns) recorded in the store.
 */
import type { Tool } from '../../tool/define-tool.ts'
import { agentHireTool } from './agent-hire-tool.ts'
import { runAwaitTool } from './run-await-tool.ts'
import { runCancelTool } from './run-cancel-tool.ts'
import { runListTool } from './run-list-tool.ts'
import { runObserveTool } from './run-observe-tool.ts'
import { runSettleTool } from './run-settle-tool.ts'

/** The Run tools, in the order they are offered. */
export const runTools: readonly Tool[] = [
  agentHireTool,
  runAwaitTool,
  runListTool,
  runObserveTool,
  runCancelTool,
  runSettleTool,
]

export { agentHireTool, runAwaitTool, runCancelTool, runListTool, runObserveTool, runSettleTool }
