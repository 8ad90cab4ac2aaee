/**
 * @module tools/tasks
 * The task tools: a durable task list per workspace line.
 */
import type { Tool } from '../../tool/define-tool.ts'
import { taskCreateTool } from './task-create-tool.ts'
import { taskListTool } from './task-list-tool.ts'
import { taskUpdateTool } from './task-update-tool.ts'

/** The task tools, in the order they are offered. */
export const taskTools: readonly Tool[] = [taskCreateTool, taskListTool, taskUpdateTool]

export { taskCreateTool, taskListTool, taskUpdateTool }
