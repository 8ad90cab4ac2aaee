/**
 * @module workspace/fork-owner
 * Who may act on which fork. Every fork records its owner; a principal either sees every fork
 * (the person, and the person's own stdio client) or only the forks it owns and their
 * descendants (an HTTP connection, an `--isolate` session: a Run's worlds forked from its
 * session fork are its descendants). This is the one check every door that names a fork goes
 * through: a fork a principal may not see is answered exactly like one that does not exist.
 */

/** The owner id of the person: the CLI, library callers, records older than owners. */
export const PERSON = 'person'

/** Who acts: an owner id, and whether it sees every fork. */
export interface Principal {
  /** `person`, or a session's id (`connection-…`). Recorded as the owner of its forks. */
  readonly id: string
  /** True for the person and the person's own client; false over HTTP and under `--isolate`. */
  readonly seesEveryFork: boolean
}

/** The person: sees and acts on every fork. */
export const PERSON_PRINCIPAL: Principal = Object.freeze({ id: PERSON, seesEveryFork: true })

/** A Run acting as the forker of its children's worlds: it sees its own world and below. */
export function runPrincipal(runId: string): Principal {
  return { id: runId, seesEveryFork: false }
}

/** What visibility needs of a fork. */
interface OwnedFork {
  readonly id: string
  readonly owner: string
  readonly parent: string
}

/**
 * The forks `principal` may act on, in the order given: all of them for a principal that sees
 * every fork, else those it owns and those below one it owns.
 */
export function visibleForks<Fork extends OwnedFork>(
  forks: readonly Fork[],
  principal: Principal,
): Fork[] {
  if (principal.seesEveryFork) return [...forks]
  const byId = new Map(forks.map((fork) => [fork.id, fork]))
  const owned = (fork: Fork): boolean => {
    // Walks up the parents; the step bound guards against a damaged record naming a cycle.
    let current: Fork | undefined = fork
    for (let steps = 0; current !== undefined && steps <= forks.length; steps += 1) {
      if (current.owner === principal.id) return true
      current = byId.get(current.parent)
    }
    return false
  }
  return forks.filter(owned)
}

/** The name of a Run's world: the fork a Run works in, which the Run owns. */
export function runWorldName(runId: string): string {
  return `run-${runId}`
}

/**
 * The Run whose world `fork` is, if it is one: owned by the Run and named after it. Such a fork
 * changes only through its Run and the Run's settlement (`run_settle`, `eitri runs merge`),
 * never through the line tools: a session that switched to it, wrote it, merged or discarded it
 * would settle another's work, or its own, behind the Run's record.
 */
export function runOfWorld(fork: {
  readonly owner: string
  readonly name?: string | undefined
}): string | undefined {
  return fork.name === runWorldName(fork.owner) ? fork.owner : undefined
}

/**
 * Whether `principal` may act on `fork`, looking its ancestors up one by one with `parentOf`
 * (undefined for main or a fork that is not open): what {@link visibleForks} decides for one
 * fork, without a listing of all of them.
 */
export function visibleFork<Fork extends OwnedFork>(
  fork: Fork,
  principal: Principal,
  parentOf: (id: string) => Fork | undefined,
  maxSteps: number,
): boolean {
  if (principal.seesEveryFork) return true
  let current: Fork | undefined = fork
  for (let steps = 0; current !== undefined && steps <= maxSteps; steps += 1) {
    if (current.owner === principal.id) return true
    current = parentOf(current.parent)
  }
  return false
}
