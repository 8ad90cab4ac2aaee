/**
 * @module tools/delegation
 * The delegation tools: hand a task to a model agent as a child Run and wait for its answer.
 */
import type { Tool } from '../../tool/define-tool.ts'
import { proposeChangeTool } from './propose-change-tool.ts'
import { spawnAgentTool } from './spawn-agent-tool.ts'

/** The delegation tools, in the order they are offered. */
export const delegationTools: readonly Tool[] = [spawnAgentTool, proposeChangeTool]

export { proposeChangeTool, spawnAgentTool }
