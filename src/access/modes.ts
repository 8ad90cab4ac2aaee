/**
 * @module access/modes
 * Modes: named policies with an optional access cap. `default` is the absence of a policy;
 * `plan` caps access at `read-only`. Users add their own in the configuration file.
 */
import type { ConfiguredMode } from '../config/config-file.ts'
import type { AccessLevel } from '../ports/access-context.ts'

/** A mode. */
export interface ModeDefinition {
  readonly name: string
  readonly description: string
  /** The most access this mode allows; absent leaves access alone. */
  readonly access?: AccessLevel
}

/** The built-in modes. */
export const DEFAULT_MODE: ModeDefinition = Object.freeze({
  name: 'default',
  description: 'No policy: the session setting applies as it is.',
})
export const PLAN_MODE: ModeDefinition = Object.freeze({
  name: 'plan',
  description:
    'Look, do not touch: read and search freely, write nothing, run only what is confined read-only. Leave it with exit_plan_mode.',
  access: 'read-only',
})

/**
 * Every mode a session may use: `default`, then `plan` (unless configured over), then the
 * configured ones.
 */
export function modeCatalog(configured: readonly ConfiguredMode[] = []): ModeDefinition[] {
  const modes = new Map<string, ModeDefinition>([
    [DEFAULT_MODE.name, DEFAULT_MODE],
    [PLAN_MODE.name, PLAN_MODE],
  ])
  for (const mode of configured) {
    modes.set(mode.name, {
      name: mode.name,
      description: mode.description,
      ...(mode.access === undefined ? {} : { access: mode.access as AccessLevel }),
    })
  }
  return [...modes.values()]
}
