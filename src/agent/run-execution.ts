/**
 * @module agent/run-execution
 * A Run from its start to its settled result: the program (journaled `started` first), then
 * quiescence (every child stopped), the terminal row (retried while the store is unavailable),
 * the settlement of its world, and the settlement row.
 */
import { EitriError } from '../errors/eitri-error.ts'
import type { RunFinish, RunRecord } from '../store/run-record.ts'
import { outputText } from './deterministic-programs.ts'
import { durableWrite } from './durable-write.ts'
import type { LiveRun } from './live-run.ts'
import type { Program, ProgramContext } from './program.ts'
import { cancelRun } from './run-cancel.ts'
import { NO_RUN_TOOLS, type RunTools } from './run-tools.ts'
import { resultOfRecord, type RunResult } from './run-result.ts'
import { settleWorld } from './run-settlement.ts'
import { durable, messageOf, type RunWork } from './run-work.ts'

/** Runs `work` to the Run's settled result, then lets go of the Run whatever happened. */
export async function endRun(
  work: RunWork,
  live: LiveRun,
  body: () => Promise<RunResult>,
): Promise<RunResult> {
  try {
    return await body()
  } finally {
    work.live.delete(live.id)
    // Held from admission to settlement: a process dying in between (a merge waiting for a
    // person) leaves the Run to a person through the sweep.
    work.options.leases?.release(live.id)
    work.options.onEnded?.(live.id)
  }
}

/** The program, then quiescence (every child stopped), the terminal row, the settlement. */
export async function executeRun(
  work: RunWork,
  live: LiveRun,
  program: Program,
): Promise<RunResult> {
  const { store, lines } = work.options
  const finish = await runProgram(work, live, program)
  live.programEnded = true
  // A Run that did not complete takes its children down with it; one that did waits for them,
  // so their merges land in its world before its own settlement looks at it.
  if (finish.status === 'failed' || finish.status === 'cancelled') {
    await Promise.all([...live.children].map((child) => cancelRun(work, child)))
  }
  const childResults = await Promise.allSettled([...live.children].map((child) => child.done))
  const record = await finishRun(work, live, finish)
  // Swept meanwhile (its lease lapsed), the row says failed/interrupted and the sweep kept its
  // world for a person: this process lost the Run and settles nothing.
  if (record.settlementStatus !== 'open') return resultOfRecord(record) as RunResult
  const status = record.status === 'running' ? finish.status : record.status
  let settlement: { status: 'merged' | 'review' | 'discarded'; reason: string }
  try {
    settlement = await settleWorld({
      lines,
      runId: live.id,
      agentId: live.def.id,
      world: live.worldId as string,
      status,
      policy: live.request.settlement,
      approve: work.options.approveMerge,
      signal: work.closeSignal,
    })
  } catch (error) {
    settlement = { status: 'review', reason: `settlement-failed: ${messageOf(error)}` }
  }
  const settled = await durable(work, (call) => store.settleRun(live.id, settlement, call))
  if (settlement.status === 'discarded') {
    // The worlds of children kept for review went with this one.
    for (const child of childResults) {
      if (child.status === 'fulfilled' && child.value.settlementStatus === 'review') {
        await durable(work, (call) =>
          store.settleRun(
            child.value.id,
            { status: 'discarded', reason: 'parent-discarded' },
            call,
          ),
        )
      }
    }
  }
  return resultOfRecord(settled) as RunResult
}

/**
 * Writes the Run's terminal row with `finished` in its journal (one transaction), retrying
 * while the store is unavailable (until then the Run stays `running` and its handle
 * unresolved); its lease is kept until it is settled. A `conflict` from a Run the sweep ended (its lease lapsed or was lost) answers that
 * row: failed, `interrupted`, with `finished` already journaled by the sweep.
 */
export async function finishRun(
  work: RunWork,
  live: LiveRun,
  finish: RunFinish,
): Promise<RunRecord> {
  const { store } = work.options
  const reason = finish.status === 'completed' ? undefined : finish.reason
  // `finished` goes in the terminal row's transaction: one commit, and never seen without it.
  const events = [{ type: 'finished', data: { status: finish.status, ...(reason && { reason }) } }]
  let row: RunRecord
  try {
    row = await durable(work, (call) => store.finishRun(live.id, { ...finish, events }, call))
  } catch (error) {
    if (!EitriError.isInstance(error) || error.code !== 'conflict') throw error
    const swept = await durable(work, (call) => store.getRun(live.id, call))
    if (swept === undefined || swept.status === 'running' || swept.status === 'waiting') throw error
    row = swept
  }
  // Only now: a watcher told `finished` finds the terminal row in the store.
  work.watchers.finished(live.id, row.status, row.reason ?? undefined)
  return row
}

/** What the program's end is, as the Run's row will say. */
async function runProgram(work: RunWork, live: LiveRun, program: Program): Promise<RunFinish> {
  const signal = live.controller.signal
  if (signal.aborted) return { status: 'cancelled', reason: 'cancelled before it started' }
  try {
    // Journaled before the program runs, so the journal never shows work it did not start.
    // Committed, not waited for on disk: nothing outside rests on it before the program's
    // first intent or the terminal row, whose syncs make it durable too (decision 0018).
    await durableWrite(
      (call) =>
        work.options.store.appendRunEvents(live.id, [{ type: 'started' }], {
          ...call,
          deferSync: true,
        }),
      { signal, log: work.options.onStoreRetry },
    )
  } catch (error) {
    if (signal.aborted) return { status: 'cancelled', reason: 'cancelled before it started' }
    return { status: 'failed', reason: 'start-not-journaled', error: messageOf(error) }
  }
  let tools: RunTools | undefined
  try {
    const hire: ProgramContext['hire'] = (roster, ref, options) =>
      work.hire(roster, ref, options, live)
    const scope = {
      runId: live.id,
      world: live.world,
      line: live.worldId as string,
      modelRun: program.modelRun,
    }
    tools =
      (await work.options.runTools?.({ ...scope, authority: live.authority, signal, hire })) ??
      NO_RUN_TOOLS
    const outcome = await program.run({
      runId: live.id,
      agent: live.def,
      authority: live.authority,
      task: live.request.task,
      signal,
      world: live.world,
      tree: () => work.options.lines.tree(live.worldId as string),
      hire,
      tools,
      journal: async (events) => {
        await durableWrite((call) => work.options.store.appendRunEvents(live.id, events, call), {
          signal,
          log: work.options.onStoreRetry,
        })
      },
    })
    // Cancelling stops its children first; a program that ends while they stop (having
    // seen a child's cancelled result) ends cancelled all the same.
    if (live.cancelling) return { status: 'cancelled' }
    switch (outcome.status) {
      case 'completed':
        return {
          status: 'completed',
          value: outcome.value,
          output: outcome.output ?? outputText(outcome.value),
        }
      case 'failed':
        return {
          status: 'failed',
          reason: outcome.reason ?? 'program-failed',
          error: outcome.error,
        }
      case 'waiting':
        return { status: 'waiting', reason: outcome.reason }
    }
    const status = (outcome as { status?: unknown }).status
    return {
      status: 'failed',
      reason: 'program-failed',
      error: `unknown outcome ${String(status)}`,
    }
  } catch (error) {
    if (signal.aborted) return { status: 'cancelled' }
    return { status: 'failed', reason: 'program-threw', error: messageOf(error) }
  } finally {
    // It hires nothing more from now: a tool call's work that ends while its tools close (a
    // js_eval hire still reading its roster file) is refused as any later hire is.
    live.programEnded = true
    // What its calls left running (background jobs, eval sessions) ends with the program.
    await tools?.close?.().catch(() => undefined)
  }
}
