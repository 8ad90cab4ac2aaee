/**
 * @module access/access-level
 * The access ladder: `read-only` < `workspace-write` < `full-access`. Every cap in force
 * clamps; the effective access is the narrowest of them.
 */
import { ACCESS_LEVELS, type AccessLevel } from '../ports/access-context.ts'

export { ACCESS_LEVELS }

/** True when `value` names a level. */
export function isAccessLevel(value: unknown): value is AccessLevel {
  return typeof value === 'string' && (ACCESS_LEVELS as readonly string[]).includes(value)
}

/** The narrowest of the levels given (absent ones impose nothing). */
export function narrowest(...levels: readonly (AccessLevel | undefined)[]): AccessLevel {
  let result: AccessLevel = 'full-access'
  for (const level of levels) {
    if (level !== undefined && rank(level) < rank(result)) result = level
  }
  return result
}

/** True when `level` allows more than `than`. */
export function isWider(level: AccessLevel, than: AccessLevel): boolean {
  return rank(level) > rank(than)
}

function rank(level: AccessLevel): number {
  return ACCESS_LEVELS.indexOf(level)
}
