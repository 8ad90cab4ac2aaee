/**
 * @module agent/roster-content
 * The content of a roster file, `{"agents": [AgentDef, ...]}`, checked: every agent's problems
 * are reported at once, each naming the file, the agent (its index and id) and the field, so one
 * round of fixes is enough.
 */
import { EitriError } from '../errors/eitri-error.ts'
import { parsePlainJson } from '../eval/plain-json.ts'
import { fieldPath } from '../tool/validate-input.ts'
import { checkAgentDef, type AgentDef, type AgentDefProblem } from './agent-def.ts'
import { findNonPlainData } from './plain-data.ts'

/**
 * The definitions that `value` (a roster file's parsed content) holds, in file order. `source`
 * names where it came from in errors (a file path).
 *
 * @throws EitriError `invalid_input` naming the source, and each wrong agent's index, id and
 * field; two agents with one id are refused.
 */
export function rosterContent(value: unknown, source?: string): AgentDef[] {
  const label = source === undefined ? 'The roster' : `Roster file ${source}`
  const refuse = (field: string, reason: string): EitriError =>
    new EitriError(
      'invalid_input',
      `${label} is invalid: ${field}: ${reason}. A roster file is {"agents": [AgentDef, ...]}.`,
      { data: { ...(source === undefined ? {} : { file: source }), field } },
    )
  const notPlain = findNonPlainData(value)
  if (notPlain !== undefined) {
    // An agent's own problems are reported below, with its index and id.
    const inAgent = notPlain.path[0] === 'agents' && typeof notPlain.path[1] === 'number'
    if (!inAgent) throw refuse(pathOf(notPlain.path), notPlain.reason)
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw refuse('(the file)', 'must be an object')
  }
  const unknown = Object.keys(value).filter((key) => key !== 'agents')
  if (unknown.length > 0) {
    throw refuse(unknown[0] as string, 'unknown key; a roster file holds only "agents"')
  }
  const agents = (value as { agents?: unknown }).agents
  if (!Array.isArray(agents)) {
    throw refuse('agents', agents === undefined ? 'is required' : 'must be an array')
  }
  const defs: AgentDef[] = []
  const bad: { index: number; id?: string; problems: readonly AgentDefProblem[] }[] = []
  const firstIndex = new Map<string, number>()
  agents.forEach((agent: unknown, index) => {
    const id = (agent as { id?: unknown } | null)?.id
    const named = typeof id === 'string' ? { id } : {}
    const check = checkAgentDef(agent, ['agents', index])
    if (!check.ok) {
      bad.push({ index, ...named, problems: check.problems })
      return
    }
    const earlier = firstIndex.get(check.def.id)
    if (earlier !== undefined) {
      bad.push({
        index,
        ...named,
        problems: [
          {
            field: `agents[${index}].id`,
            reason: `the same id as agents[${earlier}]; a roster holds one definition per id (raise its version instead)`,
          },
        ],
      })
      return
    }
    firstIndex.set(check.def.id, index)
    defs.push(check.def)
  })
  if (bad.length > 0) {
    const lines = bad.flatMap((agent) =>
      agent.problems.map(
        (problem) =>
          `- agents[${agent.index}]${agent.id === undefined ? '' : ` (id "${agent.id}")`}: ${problem.field}: ${problem.reason}`,
      ),
    )
    const first = bad[0] as (typeof bad)[number]
    throw new EitriError(
      'invalid_input',
      `${label} is invalid:\n${lines.join('\n')}\nFix these fields and load it again.`,
      {
        data: {
          ...(source === undefined ? {} : { file: source }),
          index: first.index,
          ...(first.id === undefined ? {} : { id: first.id }),
          field: first.problems[0]?.field,
          fields: bad.flatMap((agent) => agent.problems.map((problem) => problem.field)),
        },
      },
    )
  }
  return defs
}

/**
 * The definitions in a roster file's text.
 *
 * @throws EitriError `invalid_input` when the text is not JSON or not a valid roster.
 */
export function rosterContentFromText(text: string, source?: string): AgentDef[] {
  const parsed = parsePlainJson(text)
  if (!parsed.ok) {
    throw new EitriError(
      'invalid_input',
      `${source === undefined ? 'The roster' : `Roster file ${source}`} is ${parsed.message.startsWith('not valid JSON') ? '' : 'refused: '}${parsed.message}. A roster file is {"agents": [AgentDef, ...]}.`,
      { data: source === undefined ? {} : { file: source } },
    )
  }
  return rosterContent(parsed.value, source)
}

function pathOf(path: readonly (string | number)[]): string {
  return path.length === 0 ? '(the value)' : fieldPath(path)
}
