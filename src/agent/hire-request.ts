/**
 * @module agent/hire-request
 * The options of a hire, checked before anything happens: a bad hire must admit no Run and
 * write nothing, so every refusal comes from here (or from the roster and the ceiling), never
 * halfway through admission.
 */
import { EitriError } from '../errors/eitri-error.ts'
import { findNonPlainData } from './plain-data.ts'
import { SETTLEMENT_POLICIES, type SettlementPolicy } from './settlement-decision.ts'

/** Limits a hire may set; each is at most what the program allows (used by model programs). */
export interface RunLimits {
  readonly maxModelSteps?: number | undefined
  readonly budgetDollars?: number | undefined
}

/** What `hire` takes besides the roster and the agent. */
export interface HireOptions {
  /** The task: plain JSON data (a string, usually). */
  readonly task: unknown
  /** @default 'automatic' */
  readonly settlement?: SettlementPolicy | undefined
  /** The structural parent: a live Run of this runtime. Inside a Run, only that Run. */
  readonly parentRun?: string | undefined
  readonly limits?: RunLimits | undefined
}

/** The options, checked, with defaults applied. */
export interface HireRequest {
  readonly task: unknown
  readonly settlement: SettlementPolicy
  readonly parentRun: string | undefined
  readonly limits: RunLimits
}

const OPTION_KEYS = new Set(['task', 'settlement', 'parentRun', 'limits'])

/** The most bytes a task takes as JSON: it is stored in the Run's row and its journal. */
export const MAX_TASK_BYTES = 1024 * 1024
const LIMIT_KEYS = new Set(['maxModelSteps', 'budgetDollars'])

/**
 * The checked options of a hire.
 *
 * @throws EitriError `invalid_input` naming the option and what to give instead.
 */
export function checkHireOptions(options: unknown): HireRequest {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw invalid('options', 'must be an object such as {"task": "…"}')
  }
  const given = options as Record<string, unknown>
  const unknown = Object.keys(given).filter((key) => !OPTION_KEYS.has(key))
  if (unknown.length > 0) {
    throw invalid(
      unknown.join(', '),
      'unknown option; a hire takes only task, settlement, parentRun and limits (check the spelling)',
    )
  }
  if (given.task === undefined) throw invalid('task', 'is required: say what the agent should do')
  const notPlain = findNonPlainData(given.task, ['task'])
  if (notPlain !== undefined) throw invalid(notPlain.path.join('.'), notPlain.reason)
  const taskJson = JSON.stringify(given.task)
  if (Buffer.byteLength(taskJson) > MAX_TASK_BYTES) {
    throw invalid(
      'task',
      `is over ${MAX_TASK_BYTES / 1024 / 1024} MiB as JSON; write large inputs to a workspace file and name it in the task`,
    )
  }
  const settlement = given.settlement ?? 'automatic'
  if (!SETTLEMENT_POLICIES.includes(settlement as SettlementPolicy)) {
    throw invalid('settlement', `must be one of ${SETTLEMENT_POLICIES.join(', ')}`)
  }
  const parentRun = given.parentRun
  if (parentRun !== undefined && (typeof parentRun !== 'string' || parentRun === '')) {
    throw invalid('parentRun', 'must be the id of a live Run')
  }
  return {
    // A copy: the caller cannot change the task the Run was admitted with.
    task: JSON.parse(taskJson) as unknown,
    settlement: settlement as SettlementPolicy,
    parentRun,
    limits: checkLimits(given.limits),
  }
}

function checkLimits(limits: unknown): RunLimits {
  if (limits === undefined) return {}
  if (typeof limits !== 'object' || limits === null || Array.isArray(limits)) {
    throw invalid('limits', 'must be an object such as {"maxModelSteps": 8}')
  }
  const given = limits as Record<string, unknown>
  for (const key of Object.keys(given)) {
    if (!LIMIT_KEYS.has(key))
      throw invalid(`limits.${key}`, 'unknown limit; limits are maxModelSteps and budgetDollars')
  }
  const steps = given.maxModelSteps
  if (steps !== undefined && (!Number.isInteger(steps) || (steps as number) < 1)) {
    throw invalid('limits.maxModelSteps', 'must be a positive whole number')
  }
  const budget = given.budgetDollars
  if (
    budget !== undefined &&
    (typeof budget !== 'number' || !Number.isFinite(budget) || budget <= 0)
  ) {
    throw invalid('limits.budgetDollars', 'must be a positive finite number')
  }
  return {
    ...(steps === undefined ? {} : { maxModelSteps: steps as number }),
    ...(budget === undefined ? {} : { budgetDollars: budget }),
  }
}

function invalid(field: string, reason: string): EitriError {
  return new EitriError(
    'invalid_input',
    `Hire refused, nothing was admitted: ${field} ${reason}.`,
    {
      data: { field },
    },
  )
}
