/**
 * @module tool/task-board
 * The tasks of one workspace line, as tools and the eval sandbox see them. The store
 * implements it; rows written on a fork stay there until the fork merges.
 */

/** Every status, in the order a task usually moves through them. */
export const TASK_STATUSES = ['pending', 'in-progress', 'completed', 'blocked'] as const

/** Every priority, lowest first. */
export const TASK_PRIORITIES = ['low', 'medium', 'high'] as const

/** A task's state. */
export type TaskStatus = (typeof TASK_STATUSES)[number]

/** A task's priority. */
export type TaskPriority = (typeof TASK_PRIORITIES)[number]

/** One task as stored. Times are ISO-8601 strings (UTC). */
export interface Task {
  readonly id: string
  readonly title: string
  readonly description: string
  readonly priority: TaskPriority
  readonly status: TaskStatus
  readonly createdAt: string
  readonly updatedAt: string
  /** When it was last completed; null while it is not completed. */
  readonly completedAt: string | null
}

/** What creating a task takes. */
export interface NewTask {
  readonly title: string
  /** @default '' */
  readonly description?: string | undefined
  /** @default 'medium' */
  readonly priority?: TaskPriority | undefined
  /** @default 'pending' */
  readonly status?: TaskStatus | undefined
}

/** The fields an update may change; absent fields keep their value. */
export interface TaskChanges {
  readonly title?: string | undefined
  readonly description?: string | undefined
  readonly priority?: TaskPriority | undefined
  readonly status?: TaskStatus | undefined
}

/** Options every task operation accepts. */
export interface TaskCallOptions {
  readonly signal?: AbortSignal
}

/**
 * The tasks of one line. Every write is durable when its promise resolves.
 *
 * @example
 * const task = await ctx.tasks.create({ title: 'Write the README', priority: 'high' })
 * await ctx.tasks.update(task.id, { status: 'completed' })
 */
export interface TaskBoard {
  /** The workspace line these tasks belong to. */
  readonly line: string
  /** @throws EitriError `invalid_input` for an empty title. */
  create(task: NewTask, options?: TaskCallOptions): Promise<Task>
  /** Creates several tasks in one transaction: all of them or none. */
  createMany(tasks: readonly NewTask[], options?: TaskCallOptions): Promise<Task[]>
  /** Tasks in the order they were created, optionally of one status. */
  list(
    filter?: { readonly status?: TaskStatus | undefined },
    options?: TaskCallOptions,
  ): Promise<Task[]>
  /** The task, or undefined when this line has none with that id. */
  get(id: string, options?: TaskCallOptions): Promise<Task | undefined>
  /**
   * Changes a task. Completing it stamps `completedAt`; leaving `completed` clears it.
   *
   * @throws EitriError `not_found` for an unknown id, `invalid_input` for an empty title.
   */
  update(id: string, changes: TaskChanges, options?: TaskCallOptions): Promise<Task>
}
