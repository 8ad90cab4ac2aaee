/**
 * @module tools/tasks/task-format
 * How tasks read to a model, and the board a call needs.
 */
import { EitriError } from '../../errors/eitri-error.ts'
import type { Task, TaskBoard } from '../../ports/task-board.ts'
import type { ToolContext } from '../../tool/tool-context.ts'

/** One line per task: `t-1a2b [in-progress, high] Title — description`. */
export function formatTask(task: Task): string {
  const description = task.description === '' ? '' : ` — ${task.description}`
  return `${task.id} [${task.status}, ${task.priority}] ${task.title}${description}`
}

/** The call's task board. @throws EitriError `not_available` when the call has no store. */
export function taskBoard(ctx: ToolContext): TaskBoard {
  if (ctx.tasks === undefined) {
    throw new EitriError(
      'not_available',
      'Tasks need eitri’s store, and this caller has none; open the workshop with a store (the default) to use them.',
    )
  }
  return ctx.tasks
}
