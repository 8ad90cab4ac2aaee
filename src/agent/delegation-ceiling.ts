/**
 * @module agent/delegation-ceiling
 * How much authority a hired Run gets: never more than whoever hired it. A child's authority is
 * the intersection of its parent's and its own definition's; a child that would need more than
 * its parent holds is refused at hire, before anything is written. A pure function, so each
 * case reads as a row of a table (delegation-ceiling.test.ts).
 */
import { ACCESS_LEVELS, type AccessLevel } from '../ports/access-context.ts'
import type { AgentDef } from './agent-def.ts'

/** The default bound on how deep Runs may hire Runs (a root Run is at depth 1). */
export const DEFAULT_MAX_RUN_DEPTH = 4

/** What a Run, or whoever hires a root Run, may do and hand on. */
export interface Authority {
  /** The most access on the ladder. */
  readonly access: AccessLevel
  /** The tools it may call, and so hand on; undefined: no bound beyond each definition. */
  readonly tools: readonly string[] | undefined
  /** The program kinds it may hire; undefined: any kind the runtime runs. */
  readonly programKinds: readonly string[] | undefined
  /** How deep it sits: 0 for a caller outside any Run, 1 for a root Run. */
  readonly depth: number
}

/** The answer: the child's authority, or why it may not be hired. */
export type CeilingDecision =
  | { readonly type: 'allowed'; readonly authority: Authority }
  | {
      readonly type: 'refused'
      /** What exceeds the ceiling. Access never does: it is lowered to the parent's, not refused. */
      readonly field: 'tools' | 'program' | 'depth'
      readonly reason: string
    }

/** The lower of two levels on the access ladder. */
export function lowerAccess(a: AccessLevel, b: AccessLevel): AccessLevel {
  return ACCESS_LEVELS.indexOf(a) <= ACCESS_LEVELS.indexOf(b) ? a : b
}

/**
 * The authority of a Run of `def` hired under `parent` (a Run's authority, or the caller's
 * ceiling; undefined: the caller has none beyond the definition, as a person at the CLI).
 *
 * @example
 * childAuthority({ parent, def, maxDepth: 4 })
 * // { type: 'refused', field: 'tools', reason: 'agent "x" asks for tools its parent lacks: shell' }
 */
export function childAuthority(input: {
  readonly parent: Authority | undefined
  readonly def: AgentDef
  readonly maxDepth: number
}): CeilingDecision {
  const { parent, def, maxDepth } = input
  const depth = (parent?.depth ?? 0) + 1
  if (depth > maxDepth) {
    return {
      type: 'refused',
      field: 'depth',
      reason: `hiring agent "${def.id}" would make a Run at depth ${depth}, past the limit of ${maxDepth} (runs.maxDepth in the configuration); do the work in this Run or hire from higher up`,
    }
  }
  const kind = def.program.kind
  if (parent?.programKinds !== undefined && !parent.programKinds.includes(kind)) {
    return {
      type: 'refused',
      field: 'program',
      reason: `agent "${def.id}" runs a ${kind} program, which exceeds this delegation ceiling (allowed: ${parent.programKinds.join(', ') || 'none'}); hire an agent with one of those kinds`,
    }
  }
  if (parent?.tools !== undefined) {
    const held = new Set(parent.tools)
    const missing = def.tools.filter((tool) => !held.has(tool))
    if (missing.length > 0) {
      return {
        type: 'refused',
        field: 'tools',
        reason: `agent "${def.id}" asks for tools its parent lacks: ${missing.join(', ')}; a child gets at most its parent's tools, so hire an agent without them or give them to the parent`,
      }
    }
  }
  return {
    type: 'allowed',
    authority: {
      access: parent === undefined ? def.access : lowerAccess(parent.access, def.access),
      tools: def.tools,
      programKinds: parent?.programKinds,
      depth,
    },
  }
}
