/**
 * @module tools/tasks/task-create-tool
 * `task_create`: adds a task to the workspace line's list.
 */
import { z } from 'zod'
import { defineTool } from '../../tool/define-tool.ts'
import { TASK_PRIORITIES } from '../../ports/task-board.ts'
import { toolSuccess } from '../../tool/tool-result.ts'
import { formatTask, taskBoard } from './task-format.ts'

/** Creates one task, pending. */
export const taskCreateTool = defineTool({
  name: 'task_create',
  description:
    'Add a task to the task list of this workspace (status pending). Use it to plan multi-step work and track what is left. The new task id is in the result; pass it to task_update.',
  parameters: z.object({
    title: z.string().trim().min(1).describe('What to do, in a short line.'),
    description: z.string().optional().describe('Details: why, how, what done means.'),
    priority: z.enum(TASK_PRIORITIES).optional().describe('low, medium or high. Default medium.'),
  }),
  async execute({ title, description, priority }, ctx) {
    const task = await taskBoard(ctx).create(
      { title, description, priority },
      { signal: ctx.signal },
    )
    return toolSuccess(`Created task ${formatTask(task)}`, { id: task.id, task })
  },
})
