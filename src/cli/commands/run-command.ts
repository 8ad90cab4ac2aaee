/**
 * @module cli/commands/run-command
 * `eitri run --agent ID --task TEXT [--roster FILE] [--settlement POLICY] [--yes]`: hires one
 * Run as the person at the terminal (no ceiling beyond the configuration), shows it and its
 * children on stderr until it ends (a model Run's steps, tool calls, tokens and dollars too),
 * then prints its value on stdout. Ctrl-C cancels the Run and its children and waits for them
 * to settle. A merge into main asks the person at the terminal; without one it is refused with
 * the reason, so the Run is kept for review. `--yes` answers that one question in advance: the
 * merge of this Run's changes into main, and nothing else.
 */
import type { ApprovalRequest, Approver } from '../../access/approval.ts'
import { Roster } from '../../agent/roster.ts'
import { SETTLEMENT_POLICIES, type SettlementPolicy } from '../../agent/settlement-decision.ts'
import { EitriError } from '../../errors/eitri-error.ts'
import type { RunOutcome } from '../../ports/agent-runs.ts'
import { configuredRoster } from '../../workshop/configured-roster.ts'
import {
  EXIT_FAILURE,
  EXIT_INTERRUPTED,
  EXIT_OK,
  EXIT_WAITING,
  UsageError,
  type CliIo,
} from '../cli-io.ts'
import type { CommandLine } from '../parse-command-line.ts'
import { watchRunTree, type RunTreeView } from '../run-tree.ts'
import { terminalApprover } from '../terminal-approver.ts'
import { openFromCommandLine } from './open-from-command-line.ts'

/** Hires one Run, follows it, prints its value; the exit status says how it ended. */
export async function runCommand(
  line: CommandLine,
  io: CliIo,
  signal: AbortSignal,
  options: { readonly stderrIsTerminal?: boolean } = {},
): Promise<number> {
  if (line.positionals.length > 0)
    throw new UsageError(
      `eitri run takes no arguments (got ${JSON.stringify(line.positionals[0])}); give the task with --task TEXT`,
    )
  const agent = required('--agent', line.agent, 'the id of the agent to hire')
  const task = required('--task', line.task, 'what the agent is to do')
  const settlement = settlementOf(line.settlement)
  const fromFile = line.roster === undefined ? undefined : await rosterFile(line.roster)

  // Made once the Run exists; the approver may be called before.
  const view: { tree?: RunTreeView; runId?: string } = {}
  const ask = terminalApprover()
  // The question goes to the terminal the tree is drawn on: the tree waits while it is asked.
  const approver: Approver = async (request, context) => {
    if (line.yes && isMergeOf(request, view.runId))
      return { type: 'approved', by: 'eitri run --yes' }
    view.tree?.hold()
    try {
      return await ask(request, context)
    } finally {
      view.tree?.release()
    }
  }
  await using workshop = await openFromCommandLine(line, approver)
  const roster = fromFile ?? configuredRoster(workshop.config, workshop.configPath)
  checkAgent(roster, agent, line.roster ?? `${workshop.configPath} (agents)`)
  await using session = await workshop.openSession({ trusted: true })
  const agents = session.context().agents
  if (agents === undefined)
    throw new EitriError('not_available', 'This workshop hires no agents; nothing was run.')
  const id = await agents.hire({
    agent,
    task,
    ...(line.roster === undefined
      ? {}
      : { roster: { content: roster.toJSON(), source: line.roster } }),
    ...(settlement === undefined ? {} : { settlement }),
  })
  view.runId = id
  const tree = (view.tree = watchRunTree({
    store: workshop.store,
    rootId: id,
    write: io.stderr,
    controls: io.stderrControls ?? io.stderr,
    redraw: options.stderrIsTerminal ?? process.stderr.isTTY === true,
  }))
  const onInterrupt = () =>
    io.stderr(`eitri: cancelling Run ${id} and its children; waiting for them to stop…\n`)
  signal.addEventListener('abort', onInterrupt, { once: true })
  let outcome: RunOutcome
  try {
    // The owner's wait: Ctrl-C cancels the tree, and this answers once it has settled.
    outcome = await agents.result(id, { owned: true, signal })
  } finally {
    signal.removeEventListener('abort', onInterrupt)
    await tree.stop()
  }
  report(outcome, line.json, io)
  switch (outcome.status) {
    case 'completed':
      return EXIT_OK
    case 'waiting':
      return EXIT_WAITING
    case 'cancelled':
      return signal.aborted ? EXIT_INTERRUPTED : EXIT_FAILURE
    default:
      return EXIT_FAILURE
  }
}

/** Whether `request` is the merge of the Run `runId`'s changes into main. */
function isMergeOf(request: ApprovalRequest, runId: string | undefined): boolean {
  if (runId === undefined || request.tool !== 'run_settle') return false
  const input = request.input
  return typeof input === 'object' && input !== null && 'run' in input && input.run === runId
}

function required(flag: string, value: string | undefined, what: string): string {
  if (value === undefined || value.trim() === '')
    throw new UsageError(`eitri run needs ${flag} (${what})`)
  return value
}

function settlementOf(value: string | undefined): SettlementPolicy | undefined {
  if (value === undefined) return undefined
  const known = SETTLEMENT_POLICIES.find((policy) => policy === value)
  if (known === undefined)
    throw new UsageError(
      `--settlement ${JSON.stringify(value)} is not one of: ${SETTLEMENT_POLICIES.join(', ')}`,
    )
  return known
}

/** The roster of `--roster FILE`; a wrong file is a wrong command line, named with the flag. */
async function rosterFile(file: string): Promise<Roster> {
  try {
    return await Roster.load(file)
  } catch (error) {
    if (!EitriError.isInstance(error)) throw error
    throw new EitriError('usage', `--roster ${file}: ${error.message}`, { cause: error })
  }
}

/** Refuses an agent the roster lacks (or one not available) before anything is opened. */
function checkAgent(roster: Roster, agent: string, source: string): void {
  let found
  try {
    found = roster.lookup(agent)
  } catch (error) {
    if (!EitriError.isInstance(error)) throw error
    const ids = roster.list().map((def) => def.id)
    throw new EitriError(
      'usage',
      `--agent ${agent}: no such agent in ${source} (it has ${ids.length === 0 ? 'none' : ids.join(', ')}); give one of them, or --roster FILE`,
      { cause: error },
    )
  }
  if (found.status !== 'available')
    throw new EitriError(
      'usage',
      `--agent ${agent}: the agent is ${found.status} in ${source}; hire an available agent`,
    )
}

/** The value on stdout; on stderr, how the Run ended and what to do about a review. */
function report(outcome: RunOutcome, json: boolean, io: CliIo): void {
  if (json) io.stdout(`${JSON.stringify(outcome, null, 2)}\n`)
  else if (outcome.status === 'completed') io.stdout(textOf(outcome.value, outcome.output))
  const { id, world } = outcome
  if (outcome.status === 'failed')
    io.stderr(`eitri: Run ${id} failed: ${errorText(outcome.error)}\n`)
  if (outcome.status === 'waiting')
    io.stderr(`eitri: Run ${id} is waiting: ${outcome.reason ?? 'for something'}\n`)
  if (outcome.status === 'cancelled') io.stderr(`eitri: Run ${id} was cancelled.\n`)
  if (outcome.settlementStatus === 'review' && world !== undefined) {
    const reason = (outcome.settlementReason ?? 'review').replace(/\.$/, '')
    // Nobody could be asked (no terminal: a script, CI): say how not to ask.
    const unasked = reason.startsWith('approval-unavailable')
      ? ' Next time, `eitri run ... --yes` merges the changes into main without asking.'
      : ''
    io.stderr(
      `eitri: Run ${id} is kept for review (${reason}): its changes are in fork ${world}. See them with \`eitri diff ${world}\`, then \`eitri runs merge ${id}\` (at a terminal, to approve a merge into main) or \`eitri runs discard ${id}\`.${unasked}\n`,
    )
  }
}

function textOf(value: unknown, output: string | null | undefined): string {
  const text =
    typeof value === 'string'
      ? value
      : value === undefined
        ? (output ?? '')
        : JSON.stringify(value, null, 2)
  return text === '' || text.endsWith('\n') ? text : `${text}\n`
}

function errorText(error: unknown): string {
  if (typeof error === 'string') return error
  if (typeof error === 'object' && error !== null && 'message' in error)
    return String(error.message)
  return JSON.stringify(error)
}
