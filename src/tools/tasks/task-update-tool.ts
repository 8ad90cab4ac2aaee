/**
 * @module tools/tasks/task-update-tool
 * `task_update`: changes a task's status, title, description or priority.
 */
import { z } from 'zod'
import { EitriError } from '../../errors/eitri-error.ts'
import { defineTool } from '../../tool/define-tool.ts'
import { TASK_PRIORITIES, TASK_STATUSES } from '../../ports/task-board.ts'
import { toolSuccess } from '../../tool/tool-result.ts'
import { formatTask, taskBoard } from './task-format.ts'

/** Updates one task by id. */
export const taskUpdateTool = defineTool({
  name: 'task_update',
  description:
    'Change a task by its id (from task_create or task_list): its status (pending, in-progress, completed, blocked), title, description or priority. Fields you leave out keep their value.',
  parameters: z.object({
    id: z.string().trim().min(1).describe('The task id, such as t-3f2a9c01b4.'),
    status: z.enum(TASK_STATUSES).optional(),
    title: z.string().trim().min(1).optional(),
    description: z.string().optional(),
    priority: z.enum(TASK_PRIORITIES).optional(),
  }),
  async execute({ id, status, title, description, priority }, ctx) {
    if ([status, title, description, priority].every((value) => value === undefined)) {
      throw new EitriError(
        'invalid_input',
        'Nothing to change: give at least one of status, title, description or priority.',
      )
    }
    const task = await taskBoard(ctx).update(
      id,
      {
        status,
        title,
        description,
        priority,
      },
      { signal: ctx.signal },
    )
    return toolSuccess(`Updated task ${formatTask(task)}`, { id: task.id, task })
  },
})
