/**
 * @module workshop/run-scoped-agents
 * The agents a Run's tool calls get (js_eval's `agent`, agent_hire): every hire is a child of
 * that Run (its world forked from the Run's, under the Run's authority), and only those
 * children can be awaited, composed or cancelled. A call never names the parent: it is the Run
 * the call runs in, so a guest cannot hire beside or above it.
 */
import { join, race } from '../agent/run-composition.ts'
import type { RunHandle } from '../agent/run-handle.ts'
import type { RunToolScope } from '../agent/run-tools.ts'
import { Roster } from '../agent/roster.ts'
import { EitriError } from '../errors/eitri-error.ts'
import type { AgentRuns } from '../ports/agent-runs.ts'

/** The agents of the Run `scope` describes; hires that name no roster use `roster`. */
export function runScopedAgents(scope: RunToolScope, roster: Roster): AgentRuns {
  const children = new Map<string, RunHandle>()
  const handleOf = (id: string): RunHandle => {
    const handle = children.get(id)
    if (handle === undefined) {
      throw new EitriError(
        'permission_denied',
        `Run ${id} is not a child of Run ${scope.runId}: a Run uses only the Runs it hired itself.`,
        { data: { field: 'id' } },
      )
    }
    return handle
  }
  const refuse = (what: string): never => {
    throw new EitriError(
      'not_available',
      `${what} is not offered inside Run ${scope.runId}: it uses only its own children (result, join, race, cancel); their worlds settle as they end.`,
    )
  }
  return {
    async hire(call) {
      const from =
        call.roster === undefined
          ? roster
          : Roster.fromJSON(call.roster.content, call.roster.source)
      const handle = await scope.hire(from, call.agent, {
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
