/**
 * @module agent/roster
 * A roster: the agents one can hire, as an immutable value. Every change returns a new roster
 * and leaves the old one as it was, so a roster handed to a Run never changes under it. A roster
 * holds one definition per id (the current version); a file holds it as `{"agents": [...]}`.
 */
import { EitriError } from '../errors/eitri-error.ts'
import { fieldPath } from '../tool/validate-input.ts'
import {
  AGENT_STATUSES,
  checkAgentDef,
  invalidAgentDef,
  type AgentDef,
  type AgentDefInput,
  type AgentStatus,
} from './agent-def.ts'
import { canonicalJson } from './canonical-json.ts'
import { findNonPlainData } from './plain-data.ts'
import { rosterContent, rosterContentFromText } from './roster-content.ts'
import { readRosterText, writeRosterText } from './roster-file.ts'

/** Names one version of one agent. */
export interface AgentRef {
  readonly id: string
  readonly version: number
}

/** What {@link Roster.select} keeps; every criterion given must hold. */
export interface AgentSelector {
  readonly status?: AgentStatus
  /** Keeps agents that have this skill. */
  readonly skill?: string
  /** Keeps agents that have every one of these skills. */
  readonly skills?: readonly string[]
  /** Keeps agents for which this returns true. */
  readonly where?: (def: AgentDef) => boolean
}

/** The changes {@link Roster.revise} takes: whole top-level fields, replacing the current ones. */
export type AgentChanges = Partial<AgentDefInput>

/** The criteria {@link Roster.select} takes. */
const SELECTOR_KEYS: ReadonlySet<string> = new Set(['status', 'skill', 'skills', 'where'])

/** Ids listed when a lookup misses, at most. */
const KNOWN_IDS_SHOWN = 20

/** An immutable set of agent definitions, one per id. */
export class Roster {
  /** Sorted by id. */
  readonly #list: readonly AgentDef[]
  readonly #byId: ReadonlyMap<string, AgentDef>

  private constructor(defs: Iterable<AgentDef>) {
    this.#list = Object.freeze([...defs].sort((a, b) => (a.id < b.id ? -1 : a.id > b.id ? 1 : 0)))
    this.#byId = new Map(this.#list.map((def) => [def.id, def]))
    Object.freeze(this)
  }

  /** A roster with no agents. */
  static empty(): Roster {
    return new Roster([])
  }

  /**
   * A roster of these definitions, made one after another (see {@link Roster.make}).
   *
   * @throws EitriError `invalid_input` for an invalid definition, `conflict` for two different
   * definitions with one id.
   */
  static of(defs: Iterable<AgentDefInput>): Roster {
    let roster = Roster.empty()
    for (const def of defs) roster = roster.make(def)
    return roster
  }

  /**
   * The roster that `value` (the parsed content of a roster file) holds. `source` names where it
   * came from in errors (a file path).
   *
   * @throws EitriError `invalid_input` naming the source, and each wrong agent's index, id and
   * field.
   */
  static fromJSON(value: unknown, source?: string): Roster {
    return new Roster(rosterContent(value, source))
  }

  /**
   * The roster in a roster file's text.
   *
   * @throws EitriError `invalid_input` when the text is not JSON or not a valid roster.
   */
  static fromText(text: string, source?: string): Roster {
    return new Roster(rosterContentFromText(text, source))
  }

  /**
   * The roster saved in `file`.
   *
   * @throws EitriError `not_found` when the file does not exist, `invalid_input` naming the
   * file, the agent and the field when it is not a valid roster.
   */
  static async load(
    file: string,
    options: { readonly signal?: AbortSignal } = {},
  ): Promise<Roster> {
    return Roster.fromText(await readRosterText(file, options), file)
  }

  /** Saves this roster to `file` atomically (the old content or the new, never half). */
  async save(file: string, options: { readonly signal?: AbortSignal } = {}): Promise<void> {
    await writeRosterText(file, `${JSON.stringify(this.toJSON(), null, 2)}\n`, options)
  }

  /** The content of a roster file: every definition, sorted by id. */
  toJSON(): { readonly agents: readonly AgentDef[] } {
    return { agents: this.#list }
  }

  /** How many agents the roster holds. */
  get size(): number {
    return this.#list.length
  }

  /** Whether an agent has this id. */
  has(id: string): boolean {
    return this.#byId.has(id)
  }

  /**
   * This roster with `def` added. Making a definition the roster already holds (the same hash)
   * returns this roster unchanged, so a retried make is harmless.
   *
   * @throws EitriError `invalid_input` naming each wrong field; `conflict` when the roster holds
   * a different definition with this id.
   */
  make(def: AgentDefInput): Roster {
    const check = checkAgentDef(def)
    if (!check.ok) throw invalidAgentDef(def, check.problems)
    const existing = this.#byId.get(check.def.id)
    if (existing === undefined) return new Roster([...this.#list, check.def])
    if (canonicalJson(existing) === canonicalJson(check.def)) return this
    throw new EitriError(
      'conflict',
      `Agent "${existing.id}" is already in the roster (version ${existing.version}) with a different definition. Use revise("${existing.id}", changes) to change it, or choose another id.`,
      { data: { id: existing.id, version: existing.version } },
    )
  }

  /**
   * This roster with agent `id` changed: each field in `changes` replaces the current one, and
   * the version goes up by one.
   *
   * @throws EitriError `not_found` for an unknown id; `invalid_input` when `changes` would
   * change the id, sets the version, or makes the definition invalid.
   */
  revise(id: string, changes: AgentChanges): Roster {
    const current = this.lookup(id)
    const notPlain = findNonPlainData(changes, ['changes'])
    if (notPlain !== undefined) {
      throw new EitriError('invalid_input', `${pathOf(notPlain.path)}: ${notPlain.reason}.`, {
        data: { id, field: pathOf(notPlain.path) },
      })
    }
    if (typeof changes !== 'object' || changes === null || Array.isArray(changes)) {
      throw new EitriError(
        'invalid_input',
        `The changes to agent "${id}" must be an object of the fields to replace.`,
        { data: { id } },
      )
    }
    if ('id' in changes && changes.id !== id) {
      throw new EitriError(
        'invalid_input',
        `revise cannot change an agent's id ("${id}" to ${JSON.stringify(changes.id)}). Make a new agent with that id instead.`,
        { data: { id, field: 'id' } },
      )
    }
    if ('version' in changes) {
      throw new EitriError(
        'invalid_input',
        `revise sets the version itself (agent "${id}" becomes version ${current.version + 1}); leave version out of the changes.`,
        { data: { id, field: 'version' } },
      )
    }
    const revised = { ...current, ...changes, version: current.version + 1 }
    const check = checkAgentDef(revised)
    if (!check.ok) throw invalidAgentDef(revised, check.problems, ' (as revised)')
    return new Roster(this.#list.map((def) => (def.id === id ? check.def : def)))
  }

  /**
   * The definition named by an id (the current version) or by a ref (that version, which must
   * be the current one).
   *
   * @throws EitriError `not_found` for an unknown id; `conflict` for a stale ref, naming the
   * current version; `invalid_input` for something that is not an id or a ref.
   */
  lookup(ref: string | AgentRef): AgentDef {
    const { id, version } = refParts(ref)
    const def = this.#byId.get(id)
    if (def === undefined) {
      const known = this.#list.slice(0, KNOWN_IDS_SHOWN).map((agent) => agent.id)
      const more = this.#list.length > KNOWN_IDS_SHOWN ? ', …' : ''
      throw new EitriError(
        'not_found',
        `No agent "${id}" in the roster. ${known.length === 0 ? 'The roster is empty; make the agent first.' : `It has: ${known.join(', ')}${more}.`}`,
        { data: { id } },
      )
    }
    if (version !== undefined && version !== def.version) {
      throw new EitriError(
        'conflict',
        `Agent ref "${id}" version ${version} is stale: the roster holds version ${def.version}. Look it up by id, or use {"id": "${id}", "version": ${def.version}}.`,
        { data: { id, version, currentVersion: def.version } },
      )
    }
    return def
  }

  /**
   * The ref of agent `id`'s current version.
   *
   * @throws EitriError `not_found` for an unknown id.
   */
  ref(id: string): AgentRef {
    const def = this.lookup(id)
    return Object.freeze({ id: def.id, version: def.version })
  }

  /** Every definition, sorted by id. */
  list(): readonly AgentDef[] {
    return this.#list
  }

  /**
   * The definitions that meet every criterion given, sorted by id.
   *
   * @throws EitriError `invalid_input` for an unknown criterion or a wrong value.
   * @example
   * roster.select({ status: 'available', skills: ['review', 'typescript'] })
   */
  select(selector: AgentSelector = {}): readonly AgentDef[] {
    const { status, skill, skills, where } = checkSelector(selector)
    return Object.freeze(
      this.#list.filter(
        (def) =>
          (status === undefined || def.status === status) &&
          (skill === undefined || def.skills.includes(skill)) &&
          (skills === undefined || skills.every((name) => def.skills.includes(name))) &&
          (where === undefined || where(def)),
      ),
    )
  }
}

function refParts(ref: unknown): { id: string; version?: number } {
  if (typeof ref === 'string') return { id: ref }
  if (typeof ref === 'object' && ref !== null && !Array.isArray(ref)) {
    const { id, version, ...rest } = ref as Record<string, unknown>
    const extra = Object.keys(rest)
    if (
      typeof id === 'string' &&
      Number.isSafeInteger(version) &&
      (version as number) >= 1 &&
      extra.length === 0
    ) {
      return { id, version: version as number }
    }
  }
  throw new EitriError(
    'invalid_input',
    `An agent is looked up by its id ("code-reviewer") or by a ref {"id": "code-reviewer", "version": 2}; got ${describe(ref)}.`,
  )
}

function checkSelector(selector: unknown): AgentSelector {
  if (typeof selector !== 'object' || selector === null || Array.isArray(selector)) {
    throw new EitriError(
      'invalid_input',
      `select takes an object {status?, skill?, skills?, where?}; got ${describe(selector)}.`,
    )
  }
  const fields = selector as Record<string, unknown>
  const refuse = (field: string, reason: string) =>
    new EitriError('invalid_input', `select: ${field}: ${reason}.`, { data: { field } })
  for (const key of Object.keys(fields)) {
    if (!SELECTOR_KEYS.has(key)) {
      throw refuse(key, 'unknown criterion; select takes status, skill, skills and where')
    }
  }
  const { status, skill, skills, where } = fields
  if (status !== undefined && !AGENT_STATUSES.includes(status as AgentStatus)) {
    throw refuse('status', `must be one of ${AGENT_STATUSES.join(', ')}`)
  }
  if (skill !== undefined && typeof skill !== 'string') throw refuse('skill', 'must be a string')
  if (
    skills !== undefined &&
    !(Array.isArray(skills) && skills.every((name) => typeof name === 'string'))
  ) {
    throw refuse('skills', 'must be an array of strings')
  }
  if (where !== undefined && typeof where !== 'function') {
    throw refuse('where', 'must be a function from a definition to true or false')
  }
  return selector
}

function pathOf(path: readonly (string | number)[]): string {
  return path.length === 0 ? '(the value)' : fieldPath(path)
}

function describe(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value)
  if (typeof value === 'object' && value !== null) {
    try {
      return JSON.stringify(value).slice(0, 200)
    } catch {
      return 'an object that is not JSON'
    }
  }
  return typeof value === 'function' ? 'a function' : String(value)
}
