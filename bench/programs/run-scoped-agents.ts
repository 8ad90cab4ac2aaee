/**
 * The agents a js_eval program gets while it runs as a Run's program, for the program bench:
 * every hire is a child of that Run (its world forked from the Run's, under the Run's
 * authority), and only those children can be waited on, composed or cancelled. The program
 * never names the parent: it is the Run it runs in.
 */
import { Roster } from '../../src/agent/roster.ts'
import { join, race } from '../../src/agent/run-composition.ts'
import type { RunHandle } from '../../src/agent/run-handle.ts'
import type { ProgramContext } from '../../src/agent/program.ts'
import { EitriError } from '../../src/errors/eitri-error.ts'
import type { AgentRuns } from '../../src/ports/agent-runs.ts'

/** The agents of the Run `context` runs. */
export function runScopedAgents(context: ProgramContext): AgentRuns {
  const children = new Map<string, RunHandle>()
  const handleOf = (id: string): RunHandle => {
    const handle = children.get(id)
    if (handle === undefined) {
      throw new EitriError('permission_denied', `Run ${id} is not a child of Run ${context.runId}.`)
    }
    return handle
  }
  const refuse = (what: string): never => {
    throw new EitriError('not_available', `${what} is not offered to a Run's program here.`)
  }
  return {
    async hire(call) {
      const roster =
        call.roster === undefined
          ? Roster.empty()
          : Roster.fromJSON(call.roster.content, call.roster.source)
      const handle = await context.hire(roster, call.agent, {
        task: call.task,
        ...(call.settlement === undefined ? {} : { settlement: call.settlement as never }),
        ...(call.limits === undefined ? {} : { limits: call.limits as never }),
      })
      children.set(handle.id, handle)
      return handle.id
    },
    result: (id, options = {}) =>
      options.owned === true ? handleOf(id).ownedResult(options) : handleOf(id).result(options),
    wait: () => refuse('Waiting for any Run'),
    join: (ids, options = {}) => join(ids.map(handleOf), options),
    race: (ids, options = {}) => race(ids.map(handleOf), options),
    cancel: (id) => handleOf(id).cancel(),
    settle: () => refuse('Settling a Run'),
  }
}
