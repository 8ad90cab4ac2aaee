/**
 * @module workspace/line-discard
 * Throwing a fork away with its history line: the record first, durable, so a crash leaves a
 * discarded fork, never a half-removed one. Refused while it has forks of its own.
 */
import fsPromises from 'node:fs/promises'
import { EitriError } from '../errors/eitri-error.ts'
import { changeCount, type ForkOverviewContext } from './fork-overview.ts'
import {
  displayName,
  forkRef,
  forksBelowRefusal,
  readChildForks,
  writeForkAsync,
  type ForkInfo,
} from './fork-registry.ts'
import { forkWriteLog } from './fork-trees.ts'

/** What discarding a fork needs from the lines. */
export interface DiscardContext extends ForkOverviewContext {
  /** Forks whose reference is made and record not yet written. */
  readonly forming: ReadonlyMap<string, ForkInfo>
  /** Forks whose discarded record is being written: no door reaches them. */
  readonly discarding: Set<string>
}

/** Discards `info`; see `WorkspaceLines.discard`. */
export async function discardFork(context: DiscardContext, info: ForkInfo): Promise<void> {
  const discarded = await context.serialize(async () => {
    if (context.discarding.has(info.id))
      throw new EitriError('conflict', `Fork ${displayName(info)} is being discarded already.`)
    const children = [
      ...readChildForks(context.stateDir, info.id),
      ...[...context.forming.values()].filter((candidate) => candidate.parent === info.id),
    ]
    if (children.length > 0) throw forksBelowRefusal(info, children)
    const changes = await changeCount(context, info)
    // Nothing in this process reaches it from now: not a write, not a fork from it.
    context.discarding.add(info.id)
    return { ...info, discarded: { at: new Date().toISOString(), changes } }
  })
  try {
    // The record first, durable (outside the queue, so discards at once sync together): a
    // crash after it leaves a discarded fork, never a half-removed one.
    await writeForkAsync(context.stateDir, discarded)
    // Outside the queue too: no door reaches the fork now and nothing queued before the
    // first step is left for it, so its reference and write log concern no other line; their
    // removals (which wait on the journal while other writers sync) overlap.
    await context.history.deleteRef(forkRef(info.id))
    context.forgetTree(info.id)
    await fsPromises.rm(forkWriteLog(context.stateDir, info.id), { force: true })
  } finally {
    context.discarding.delete(info.id)
  }
  await context.hooks.discarded?.(info.id)
}
