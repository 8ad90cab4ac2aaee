/**
 * @module agent/run-admission
 * Admitting a Run, durability first, in this order: its row (`running`, with its provenance,
 * holding a lease when the runtime has a keeper) and the trigger in its journal, in one
 * transaction; the cancel hook; its world forked from its parent's; only then does its program
 * start. A failure after the row
 * is written ends the Run as failed with the step that failed.
 */
import { createHash } from 'node:crypto'
import { EitriError } from '../errors/eitri-error.ts'
import type { RunAdmission } from '../store/run-record.ts'
import type { Principal } from '../workspace/workspace-lines.ts'
import { INTERPRETER_VERSION } from './agent-runtime-options.ts'
import { agentDefHash } from './agent-def.ts'
import { canonicalJson } from './canonical-json.ts'
import type { LiveRun } from './live-run.ts'
import { runChatId } from './llm/chat-id.ts'
import type { Program } from './program.ts'
import type { Roster } from './roster.ts'
import { endRun, executeRun, finishRun } from './run-execution.ts'
import { resultOfRecord, type RunResult } from './run-result.ts'
import { durable, messageOf, type RunWork } from './run-work.ts'

/** Where a Run's world forks from, and who forks it. */
export interface WorldFork {
  readonly from: string
  readonly by: Principal
}

/**
 * Admits `live` and starts its program; resolves once it runs (observing and cancelling work).
 *
 * @throws what the store threw when the row could not be written (nothing was admitted), or
 *   EitriError `tool_failed` with the Run's id in `data.runId` when a later step failed.
 */
export async function admitRun(
  work: RunWork,
  live: LiveRun,
  roster: Roster,
  program: Program,
  fork: WorldFork,
): Promise<void> {
  const { store, lines, leases } = work.options
  const { def, request } = live
  // A child belongs to its parent from the start: a parent whose program did not wait for the
  // hire still waits for the child before it settles.
  live.parent?.children.add(live)
  const admission: RunAdmission = {
    id: live.id,
    kind: 'agent-task',
    parentId: live.parent?.id,
    causedBy: live.causedBy,
    actor: work.options.actor,
    trigger: { task: request.task },
    // The trigger is journaled with the row, in one commit.
    events: [{ type: 'trigger', data: { task: request.task } }],
    roster: rosterIdentity(roster),
    agentId: def.id,
    agentVersion: def.version,
    programKind: def.program.kind,
    interpreterVersion: INTERPRETER_VERSION,
    agentDefHash: agentDefHash(def),
    // A model Run's trace is kept under this id; it is derived from the Run's id alone.
    chatId: def.program.kind === 'llm' ? runChatId(live.id) : undefined,
    world: live.world,
    isolation: 'fork',
    settlementPolicy: request.settlement,
  }
  try {
    // With leases, the Run is held by this process from the instant its row exists.
    await (leases === undefined ? store.admitRun(admission) : leases.admit(admission))
  } catch (error) {
    // No row: nothing to end durably, but whoever waits on the Run must hear.
    live.parent?.children.delete(live)
    live.follow(Promise.reject(error instanceof Error ? error : new Error(String(error))))
    throw error
  }
  work.live.set(live.id, live)
  work.hired.add(live.id)
  work.watchers.started({ runId: live.id, agentId: def.id, parentId: live.parent?.id })
  work.options.onAdmitted?.(live.id)
  const step = 'world-fork-failed'
  try {
    const world = await lines.fork({
      from: fork.from,
      name: live.world,
      by: fork.by,
      owner: live.id,
    })
    live.worldId = world.id
  } catch (error) {
    // Followed like any end, so a cancel or a close waiting on this Run is answered too.
    live.follow(
      endRun(work, live, async () => {
        const record = await finishRun(work, live, {
          status: 'failed',
          reason: step,
          error: messageOf(error),
        })
        return resultOfRecord(
          await durable(work, (call) =>
            store.settleRun(record.id, { status: 'discarded', reason: 'failed' }, call),
          ),
        ) as RunResult
      }),
    )
    await live.done.catch(() => undefined)
    throw new EitriError(
      'tool_failed',
      `Run ${live.id} was admitted but could not start (${step}: ${messageOf(error)}); it is recorded as failed.`,
      { cause: error, data: { runId: live.id } },
    )
  }
  if (work.closed()) {
    // Admitted before the close began, so it has a row and ends durably: but nothing starts
    // once the runtime is closing.
    live.cancelling = true
    work.watchers.cancelRequested(live.id)
    live.controller.abort(new EitriError('cancelled', 'The agent runtime closed.'))
  }
  live.follow(endRun(work, live, () => executeRun(work, live, program)))
}

/** What a Run's row records as its roster: the hash of the roster's canonical content. */
function rosterIdentity(roster: Roster): string {
  return `sha256:${createHash('sha256').update(canonicalJson(roster.toJSON())).digest('hex')}`
}
