/**
 * @module store/sql/sql-task-board
 * The tasks of one line over SQL: every change is a new immutable version, so forks can see
 * their parent's tasks as of the fork without copying them.
 */
import { EitriError } from '../../errors/eitri-error.ts'
import {
  TASK_PRIORITIES,
  TASK_STATUSES,
  type NewTask,
  type Task,
  type TaskBoard,
  type TaskChanges,
  type TaskPriority,
  type TaskStatus,
} from '../../ports/task-board.ts'
import type { StoreDependencies } from '../store-dependencies.ts'
import { latestVersion, latestVersions, readLineChain, type LineChain } from './line-chain.ts'
import type { SqlDriver, SqlRow, SqlTransaction, SqlValue } from './sql-driver.ts'

const TASK_COLUMNS =
  'sequence, line, id, title, description, priority, status, created_at, updated_at, completed_at, created_sequence'

/** A stored task version, with what a merge must carry over. */
export interface TaskVersion extends Task {
  readonly createdSequence: number
}

/** The tasks of `line` in the database behind `driver`. */
export function sqlTaskBoard(
  driver: SqlDriver,
  line: string,
  dependencies: StoreDependencies,
): TaskBoard {
  const createMany = async (
    tasks: readonly NewTask[],
    options: { signal?: AbortSignal } = {},
  ): Promise<Task[]> => {
    const checked = tasks.map(checkNewTask)
    if (checked.length === 0) return []
    return driver.transaction(
      'write',
      async (transaction) => {
        await readLineChain(transaction, line, { lock: true })
        const sequences = await transaction.nextSequences(checked.length)
        const now = dependencies.now().toISOString()
        const created = checked.map((task, index): TaskVersion => {
          const sequence = sequences[index] as number
          return {
            id: dependencies.newTaskId(),
            title: task.title,
            description: task.description,
            priority: task.priority,
            status: task.status,
            createdAt: now,
            updatedAt: now,
            completedAt: task.status === 'completed' ? now : null,
            createdSequence: sequence,
          }
        })
        for (const [index, task] of created.entries()) {
          await insertTaskVersion(transaction, sequences[index] as number, line, task)
        }
        return created.map(publicTask)
      },
      options,
    )
  }

  return {
    line,
    createMany,
    async create(task, options) {
      const [created] = await createMany([task], options)
      return created as Task
    },
    async list(filter = {}, options = {}) {
      if (filter.status !== undefined) checkStatus(filter.status)
      return driver.transaction(
        'read',
        async (transaction) => {
          const chain = await readLineChain(transaction, line)
          const latest = latestVersions('task_versions', 'id', chain)
          const status = filter.status === undefined ? '' : ' AND latest.status = ?'
          const rows = await transaction.all(
            `SELECT ${prefixed('latest')} FROM ${latest.sql} WHERE latest.version_rank = 1${status}
              ORDER BY latest.created_sequence, latest.id`,
            [...latest.parameters, ...(filter.status === undefined ? [] : [filter.status])],
          )
          return rows.map((row) => publicTask(taskFromRow(row)))
        },
        options,
      )
    },
    async get(id, options = {}) {
      return driver.transaction(
        'read',
        async (transaction) => {
          const chain = await readLineChain(transaction, line)
          const found = await visibleTask(transaction, chain, id)
          return found === undefined ? undefined : publicTask(found)
        },
        options,
      )
    },
    async update(id, changes, options = {}) {
      const checked = checkChanges(changes)
      return driver.transaction(
        'write',
        async (transaction) => {
          const chain = await readLineChain(transaction, line, { lock: true })
          const current = await visibleTask(transaction, chain, id)
          if (current === undefined) {
            throw new EitriError(
              'not_found',
              `No task with id ${JSON.stringify(id)} on this line. task_list shows the ids.`,
            )
          }
          const now = dependencies.now().toISOString()
          const status = checked.status ?? current.status
          const next: TaskVersion = {
            ...current,
            title: checked.title ?? current.title,
            description: checked.description ?? current.description,
            priority: checked.priority ?? current.priority,
            status,
            updatedAt: now,
            completedAt:
              status !== 'completed'
                ? null
                : current.status === 'completed'
                  ? current.completedAt
                  : now,
          }
          const [sequence] = await transaction.nextSequences(1)
          await insertTaskVersion(transaction, sequence as number, line, next)
          return publicTask(next)
        },
        options,
      )
    },
  }
}

async function visibleTask(
  transaction: SqlTransaction,
  chain: LineChain,
  id: string,
): Promise<TaskVersion | undefined> {
  const latest = latestVersion('task_versions', 'id', chain)
  const row = await transaction.get(latest.sql, [id, ...latest.parameters])
  return row === undefined ? undefined : taskFromRow(row)
}

/** Writes one version of a task on `line`. */
export async function insertTaskVersion(
  transaction: SqlTransaction,
  sequence: number,
  line: string,
  task: TaskVersion,
): Promise<void> {
  const values: SqlValue[] = [
    sequence,
    line,
    task.id,
    task.title,
    task.description,
    task.priority,
    task.status,
    task.createdAt,
    task.updatedAt,
    task.completedAt,
    task.createdSequence,
  ]
  await transaction.run(
    `INSERT INTO task_versions (${TASK_COLUMNS}) VALUES (${values.map(() => '?').join(', ')})`,
    values,
  )
}

/** The task columns, each prefixed by a table alias. */
export function prefixed(alias: string): string {
  return TASK_COLUMNS.split(', ')
    .map((column) => `${alias}.${column}`)
    .join(', ')
}

/** The task version of a `task_versions` row. */
export function taskFromRow(row: SqlRow): TaskVersion {
  return {
    id: row['id'] as string,
    title: row['title'] as string,
    description: row['description'] as string,
    priority: row['priority'] as TaskPriority,
    status: row['status'] as TaskStatus,
    createdAt: row['created_at'] as string,
    updatedAt: row['updated_at'] as string,
    completedAt: (row['completed_at'] as string | null) ?? null,
    createdSequence: Number(row['created_sequence']),
  }
}

function publicTask(task: TaskVersion): Task {
  const { createdSequence: _sequence, ...rest } = task
  return rest
}

function checkNewTask(task: NewTask): Required<{ [K in keyof NewTask]: NonNullable<NewTask[K]> }> {
  return {
    title: checkTitle(task.title),
    description: task.description ?? '',
    priority: checkPriority(task.priority ?? 'medium'),
    status: checkStatus(task.status ?? 'pending'),
  }
}

function checkChanges(changes: TaskChanges): TaskChanges {
  const checked: { -readonly [K in keyof TaskChanges]: TaskChanges[K] } = {}
  if (changes.title !== undefined) checked.title = checkTitle(changes.title)
  if (changes.description !== undefined) checked.description = changes.description
  if (changes.priority !== undefined) checked.priority = checkPriority(changes.priority)
  if (changes.status !== undefined) checked.status = checkStatus(changes.status)
  return checked
}

function checkTitle(title: string): string {
  const trimmed = typeof title === 'string' ? title.trim() : ''
  if (trimmed === '') {
    throw new EitriError('invalid_input', 'A task needs a title: a short line saying what to do.')
  }
  return trimmed
}

function checkPriority(priority: string): TaskPriority {
  if (!(TASK_PRIORITIES as readonly string[]).includes(priority)) {
    throw new EitriError(
      'invalid_input',
      `Unknown priority ${JSON.stringify(priority)}: use one of ${TASK_PRIORITIES.join(', ')}.`,
    )
  }
  return priority as TaskPriority
}

function checkStatus(status: string): TaskStatus {
  if (!(TASK_STATUSES as readonly string[]).includes(status)) {
    throw new EitriError(
      'invalid_input',
      `Unknown status ${JSON.stringify(status)}: use one of ${TASK_STATUSES.join(', ')}.`,
    )
  }
  return status as TaskStatus
}
