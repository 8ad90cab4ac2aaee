/**
 * @module tools/shell
 * The shell tools: run a command in the jail, in the foreground or as a background job.
 */
import type { Tool } from '../../tool/define-tool.ts'
import { shellKillTool } from './shell-kill-tool.ts'
import { shellOutputTool } from './shell-output-tool.ts'
import { shellTool } from './shell-tool.ts'

/** The shell tools, in the order they are offered. */
export const shellTools: readonly Tool[] = [shellTool, shellOutputTool, shellKillTool]

export { shellKillTool, shellOutputTool, shellTool }
