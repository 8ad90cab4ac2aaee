/**
 * @module ports/roster-rules
 * The roster's rules as plain data in, plain data out: a caller below the agent layer (the
 * code sandbox) holds a roster as `{"agents": [...]}` and asks these rules for every change and
 * query, so what it is told (the defaults, the refusals naming the agent and the field) is
 * exactly what the agent layer itself says. The agent layer implements it.
 */

/** A roster as data: the definitions, checked, with their defaults, sorted by id. */
export interface RosterData {
  readonly agents: readonly unknown[]
}

/** The roster's operations on data; each throws the roster's own `EitriError`s. */
export interface RosterRules {
  /** A roster of `defs`, made one after another (an identical repeat is harmless). */
  of(defs: readonly unknown[]): RosterData
  /** `content` (a roster file's parsed content) checked; `source` names it in errors. */
  check(content: unknown, source?: string): RosterData
  /** `roster` with `def` made. */
  make(roster: RosterData, def: unknown): RosterData
  /** `roster` with agent `id` revised by `changes` (its version goes up by one). */
  revise(roster: RosterData, id: string, changes: unknown): RosterData
  /** The definition named by an id or an `{id, version}` ref. */
  lookup(roster: RosterData, ref: unknown): unknown
  /** The definitions meeting `selector` (`{status?, skill?, skills?}`), sorted by id. */
  select(roster: RosterData, selector: unknown): readonly unknown[]
}
