/**
 * @module confine/module-target
 * Out of process, only a module's export can be loaded: a closure's captured variables live in
 * this process alone.
 */
import { EitriError } from '../errors/eitri-error.ts'
import type { ConfinedTarget } from './confined-function.ts'

/** Why a closure cannot run out of process, and what to do instead. */
export const CLOSURE_REFUSAL =
  'a closure cannot be loaded in another process: export it from a module and pass { module, export }'

/**
 * The target as a module reference.
 *
 * @throws EitriError `invalid_definition` for a closure.
 */
export function moduleTarget(
  target: ConfinedTarget,
  executorName: string,
): Extract<ConfinedTarget, { type: 'module' }> {
  if (target.type === 'module') return target
  throw new EitriError(
    'invalid_definition',
    `The ${executorName} executor cannot run this function: ${CLOSURE_REFUSAL}.`,
  )
}
