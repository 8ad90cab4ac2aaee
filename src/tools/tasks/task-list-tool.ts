/**
 * @module tools/tasks/task-list-tool
 * `task_list`: the workspace line's tasks, optionally of one status.
 */
import { z } from 'zod'
import { defineTool } from '../../tool/define-tool.ts'
import { TASK_STATUSES } from '../../ports/task-board.ts'
import { toolSuccess } from '../../tool/tool-result.ts'
import { formatTask, taskBoard } from './task-format.ts'

/** Lists tasks in creation order. */
export const taskListTool = defineTool({
  name: 'task_list',
  description:
    'List the tasks of this workspace in the order they were created, one per line: id [status, priority] title — description. Filter by status to see what is left.',
  parameters: z.object({
    status: z
      .enum(TASK_STATUSES)
      .optional()
      .describe('Only tasks with this status: pending, in-progress, completed or blocked.'),
  }),
  async execute({ status }, ctx) {
    const tasks = await taskBoard(ctx).list({ status }, { signal: ctx.signal })
    const content =
      tasks.length === 0
        ? status === undefined
          ? 'No tasks yet. Add one with task_create.'
          : `No ${status} tasks.`
        : tasks.map(formatTask).join('\n')
    return toolSuccess(content, { count: tasks.length, tasks })
  },
})
