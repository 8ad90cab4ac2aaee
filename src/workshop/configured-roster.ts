/**
 * @module workshop/configured-roster
 * The roster the configuration's `agents` make, over the shipped `coder` and `reviewer`: what
 * hires use when they name no roster file.
 * A wrong definition stops the workshop from opening, naming the file, the agent and the field.
 */
import { Roster } from '../agent/roster.ts'
import type { EitriConfig } from '../config/config-file.ts'
import { EitriError } from '../errors/eitri-error.ts'
import { withDefaultAgents } from './default-roster.ts'

/** The configuration's roster. @throws EitriError `config_invalid` naming the bad definition. */
export function configuredRoster(config: EitriConfig, configPath: string): Roster {
  try {
    return Roster.fromJSON({ agents: withDefaultAgents(config.agents) }, `${configPath} (agents)`)
  } catch (error) {
    if (!EitriError.isInstance(error)) throw error
    throw new EitriError('config_invalid', error.message, { cause: error })
  }
}
