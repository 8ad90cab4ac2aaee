/**
 * @module cli/commands/runs-command
 * `eitri runs [--status S] [--json]`, `eitri runs show RUN`, `eitri runs cancel RUN`, `eitri
 * runs merge RUN`, `eitri runs discard RUN`: the Runs recorded in the store, read (a model Run
 * with its metrics and its whole trace), cancelled and settled from the terminal (a person may settle any Run kept for review). Every form first
 * sweeps, so a Run whose process died reads as `failed`/`interrupted`, not as running.
 */
import { runChatId } from '../../agent/llm/chat-id.ts'
import { settleReviewedRun } from '../../agent/run-review.ts'
import { EitriError } from '../../errors/eitri-error.ts'
import { RUN_STATUSES, type RunRecord, type RunStatus } from '../../store/run-record.ts'
import type { Store } from '../../store/store.ts'
import type { CliIo } from '../cli-io.ts'
import { EXIT_FAILURE, EXIT_OK, UsageError } from '../cli-io.ts'
import type { CommandLine } from '../parse-command-line.ts'
import { chatText, eventText, metricsText } from '../run-trace-text.ts'
import { openFromCommandLine } from './open-from-command-line.ts'

/** Who a cancel from the terminal is recorded as asked by. */
const PERSON = 'person'

const ACTIONS = ['show', 'cancel', 'merge', 'discard'] as const

/** Lists, shows, cancels or settles Runs. */
export async function runsCommand(
  line: CommandLine,
  io: CliIo,
  signal: AbortSignal,
): Promise<number> {
  const [action, id, ...extra] = line.positionals
  if (action !== undefined && !(ACTIONS as readonly string[]).includes(action))
    throw new UsageError(
      `unknown runs action '${action}': use eitri runs, or runs show|cancel|merge|discard RUN`,
    )
  if (action !== undefined && id === undefined)
    throw new UsageError(`eitri runs ${action} needs a Run id; eitri runs lists them`)
  if (extra.length > 0) throw new UsageError(`eitri runs ${action ?? ''} takes one Run id`)
  if (action !== undefined && line.status !== undefined)
    throw new UsageError(`--status filters eitri runs only; give it without ${action}`)
  const status = statusOf(line.status)
  await using workshop = await openFromCommandLine(line)
  const store = workshop.store
  await store.sweepInterruptedRuns()
  // Awaited here: the workshop (and its store) closes when this block is left.
  if (action === 'show') return await show(store, id as string, line.json, io)
  if (action === 'cancel') return await cancel(store, id as string, line.json, io)
  if (action === 'merge' || action === 'discard') {
    await existing(store, id as string)
    const outcome = await settleReviewedRun({
      store,
      lines: workshop.lines,
      runId: id as string,
      action,
      // The person running the command is asked (on the terminal) before a merge into main.
      approve: workshop.context({ signal }).access?.approve,
      signal,
    })
    if (line.json) io.stdout(`${JSON.stringify(outcome, null, 2)}\n`)
    if (!outcome.settled) {
      io.stderr(
        `eitri: Run ${id} was not merged: ${outcome.reason.replace(/\.$/, '')}. It stays in review: run eitri runs merge ${id} at a terminal to approve, or eitri runs discard ${id}.\n`,
      )
      return EXIT_FAILURE
    }
    if (!line.json)
      io.stdout(
        action === 'merge'
          ? `Merged the changes of Run ${id}; it is settled as merged.\n`
          : `Discarded the fork of Run ${id}; it is settled as discarded.\n`,
      )
    return EXIT_OK
  }
  const runs = await store.listRuns({ status })
  if (line.json) {
    io.stdout(`${JSON.stringify(runs, null, 2)}\n`)
    return EXIT_OK
  }
  if (runs.length === 0)
    io.stdout(status === undefined ? 'No Runs recorded.\n' : `No ${status} Runs.\n`)
  for (const run of runs) io.stdout(`${runLine(run)}\n`)
  return EXIT_OK
}

function statusOf(status: string | undefined): RunStatus | undefined {
  if (status === undefined) return undefined
  const known = RUN_STATUSES.find((name) => name === status)
  if (known === undefined)
    throw new UsageError(
      `--status ${status} is no Run status: use one of ${RUN_STATUSES.join(', ')}`,
    )
  return known
}

/** `id  agent  status[: reason]  settlement  started  ended`. */
function runLine(run: RunRecord): string {
  const status = run.reason === null ? run.status : `${run.status}: ${run.reason}`
  return [
    run.id,
    (run.agentId ?? run.kind).padEnd(12),
    status.padEnd(22),
    run.settlementStatus.padEnd(9),
    run.startedAt,
    run.endedAt ?? '-',
  ].join('  ')
}

async function existing(store: Store, id: string): Promise<RunRecord> {
  const run = await store.getRun(id)
  if (run === undefined)
    throw new EitriError(
      'not_found',
      `No Run with id ${JSON.stringify(id)}; eitri runs lists them.`,
    )
  return run
}

async function show(store: Store, id: string, json: boolean, io: CliIo): Promise<number> {
  const run = await existing(store, id)
  const events = await store.listRunEvents(id)
  const children = await store.listRuns({ parentId: id })
  // A model Run's trace: kept by the Run's id, so it outlives the Run's world.
  const metrics = await store.getRunMetrics(id)
  const chat = await store.listChatMessages(runChatId(id))
  if (json) {
    io.stdout(
      `${JSON.stringify({ run, events, children, metrics: metrics ?? null, chat }, null, 2)}\n`,
    )
    return EXIT_OK
  }
  io.stdout(`${runLine(run)}\n`)
  const details: [string, unknown][] = [
    ['parent', run.parentId],
    ['error', run.error],
    ['value', run.value],
    ['output', run.output],
    ['settlement', run.settlementReason],
    [
      'lease',
      run.leaseOwner === undefined ? null : `${run.leaseOwner} until ${run.leaseExpiresAt}`,
    ],
    [
      'cancel asked',
      run.cancelRequestedAt === undefined
        ? null
        : `${run.cancelRequestedAt} by ${run.cancelRequestedBy}`,
    ],
  ]
  for (const [name, value] of details) {
    if (value === null || value === undefined) continue
    io.stdout(`  ${name}: ${typeof value === 'string' ? value : JSON.stringify(value)}\n`)
  }
  io.stdout(events.length === 0 ? 'No events.\n' : 'Events:\n')
  for (const event of events) {
    io.stdout(`  ${event.sequence}. ${event.time}  ${eventText(event.type, event.data)}\n`)
  }
  io.stdout(children.length === 0 ? 'No child Runs.\n' : 'Child Runs:\n')
  for (const child of children) io.stdout(`  ${runLine(child)}\n`)
  if (metrics !== undefined) io.stdout(metricsText(metrics))
  if (chat.length > 0) io.stdout(`Trace:\n${chatText(chat)}`)
  return EXIT_OK
}

async function cancel(store: Store, id: string, json: boolean, io: CliIo): Promise<number> {
  const before = await existing(store, id)
  if (before.endedAt !== null) {
    throw new EitriError(
      'conflict',
      `Run ${id} already ended (${before.status}${before.reason === null ? '' : `: ${before.reason}`} at ${before.endedAt}); there is nothing to cancel.`,
    )
  }
  const run = await store.requestRunCancel(id, PERSON)
  if (json) {
    io.stdout(`${JSON.stringify(run, null, 2)}\n`)
    return EXIT_OK
  }
  io.stdout(
    `Asked the process running ${id} to cancel it; it stops within a moment while it runs, and eitri runs show ${id} shows when it has.\n`,
  )
  return EXIT_OK
}
