/**
 * @module tools/runs
 * The Run tools: read the Runs (agent tasks and turns) recorded in the store.
 */
import type { Tool } from '../../tool/define-tool.ts'
import { runListTool } from './run-list-tool.ts'
import { runObserveTool } from './run-observe-tool.ts'

/** The Run tools, in the order they are offered. */
export const runTools: readonly Tool[] = [runListTool, runObserveTool]

export { runListTool, runObserveTool }
