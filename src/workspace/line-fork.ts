/**
 * @module workspace/line-fork
 * Making a fork: a record and a name, no copy. Its history line has no reference until its
 * first commit of its own; until then its head is its fork point, which its parent's line keeps.
 */
import { EitriError } from '../errors/eitri-error.ts'
import { MAIN_LINE } from '../ports/line-control.ts'
import { PERSON_PRINCIPAL, visibleFork, visibleForks, type Principal } from './fork-owner.ts'
import {
  chooseForkName,
  displayName,
  newForkId,
  readForkById,
  readForks,
  readForksNamed,
  writeForkAsync,
  type ForkInfo,
} from './fork-registry.ts'
import type { LineHooks } from './line-types.ts'

/**
 * How far a lookup walks up a fork's parents by id before it lists every fork instead (a walk
 * that ends without an answer is decided by the listing, so this bounds work, not the answer).
 */
export const MAX_FORK_DEPTH_WALK = 64

/** What a fork is made from; see `WorkspaceLines.fork`. */
export interface ForkOptions {
  readonly from?: string
  readonly name?: string
  readonly label?: string
  readonly by?: Principal
  readonly owner?: string
  readonly readOnly?: boolean
  readonly quotaBytes?: number
}

/** What making a fork needs from the lines. */
export interface ForkMakingContext {
  readonly stateDir: string
  readonly hooks: LineHooks
  /** Forks whose reference is made and record not yet written (their names are taken). */
  readonly forming: Map<string, ForkInfo>
  /** Forks whose discarded record is being written: no door reaches them. */
  readonly discarding: ReadonlySet<string>
  serialize<T>(work: () => Promise<T>): Promise<T>
  head(line: string): Promise<string>
  /** The line named by id or name among those `principal` may act on. */
  find(idOrName: string, principal: Principal): ForkInfo | typeof MAIN_LINE
}

/** Makes a fork; see `WorkspaceLines.fork`. */
export async function makeFork(
  context: ForkMakingContext,
  options: ForkOptions,
): Promise<ForkInfo> {
  const { stateDir } = context
  const info = await context.serialize(async () => {
    const by = options.by ?? PERSON_PRINCIPAL
    // No listing unless a label asks for the names its maker sees: `from` by id, a name among the
    // forks so named that `by` sees (a listing costs a stat per open fork, and a hire forks).
    const from = context.find(options.from ?? MAIN_LINE, by)
    if (from !== MAIN_LINE && context.discarding.has(from.id))
      throw new EitriError(
        'conflict',
        `Fork ${displayName(from)} is being discarded; fork another line.`,
      )
    // A merged fork takes no more work, its store rows included: refused here, before a fork
    // of it is made (was: made, then its store hook failed with the store's words).
    if (from !== MAIN_LINE && from.merged !== undefined)
      throw new EitriError(
        'conflict',
        `Fork ${displayName(from)} was merged into ${from.merged.into} and takes no more work; fork ${from.merged.into} instead (workspace_fork {"from":"${from.merged.into}"}).`,
      )
    const forming = [...context.forming.values()]
    const named =
      options.name === undefined
        ? []
        : [
            ...readForksNamed(stateDir, options.name),
            ...forming.filter((fork) => fork.name === options.name),
          ].filter((fork) =>
            visibleFork(fork, by, (id) => readForkById(stateDir, id), MAX_FORK_DEPTH_WALK),
          )
    const labelled = options.name === undefined && options.label !== undefined
    const name = chooseForkName(
      options,
      named,
      labelled ? visibleForks([...readForks(stateDir), ...forming], by) : [],
    )
    const parent = from === MAIN_LINE ? MAIN_LINE : from.id
    const forkPoint = await context.head(parent)
    const id = newForkId()
    const info: ForkInfo = {
      id,
      ...(name === undefined ? {} : { name }),
      owner: options.owner ?? by.id,
      parent,
      forkPoint,
      created: new Date().toISOString(),
      readOnly: options.readOnly === true,
      quotaBytes: options.quotaBytes ?? 1024 ** 3,
    }
    // Its name taken and its parent kept from now, though nothing of it is written yet.
    context.forming.set(id, info)
    return info
  })
  try {
    // Outside the queue, so forks made at once sync together: the record makes the fork
    // exist. Its history line has no reference until its first commit of its own: until then
    // its head is its fork point, which its parent's line keeps (main's and a fork's lines
    // only move forward, and a fork with forks of its own is never discarded).
    await writeForkAsync(stateDir, info)
  } finally {
    context.forming.delete(info.id)
  }
  await context.hooks.forked?.(info.parent, info.id)
  return info
}
