/**
 * @module agent/roster-value-rules
 * {@link RosterRules} over {@link Roster}: each call rebuilds the roster from its data (checking
 * it again, since the data comes from a caller that may have changed it) and answers data.
 */
import type { RosterData, RosterRules } from '../ports/roster-rules.ts'
import type { AgentDefInput } from './agent-def.ts'
import { Roster, type AgentChanges, type AgentSelector } from './roster.ts'
import { EitriError } from '../errors/eitri-error.ts'

function data(roster: Roster): RosterData {
  return { agents: roster.list() }
}

function rosterOf(roster: RosterData): Roster {
  return Roster.fromJSON(roster)
}

/** The roster's rules, as the code sandbox's `agent` namespace uses them. */
export const rosterRules: RosterRules = {
  of(defs) {
    if (!Array.isArray(defs)) {
      throw new EitriError(
        'invalid_input',
        'A roster is made of an array of agent definitions, such as [{"id": "echo", "program": {"kind": "echo"}}].',
        { data: { field: 'defs' } },
      )
    }
    return data(Roster.of(defs as readonly AgentDefInput[]))
  },
  check: (content, source) => data(Roster.fromJSON(content, source)),
  make: (roster, def) => data(rosterOf(roster).make(def as AgentDefInput)),
  revise: (roster, id, changes) => data(rosterOf(roster).revise(id, changes as AgentChanges)),
  lookup: (roster, ref) => rosterOf(roster).lookup(ref as string),
  select: (roster, selector) => rosterOf(roster).select(selector as AgentSelector),
}
