/**
 * @module workshop/workshop-session
 * One session of a workshop: its access, its programs, its eval sessions, and the line of work
 * its tools act on (main, or a fork it switched to or was isolated in).
 */
import { randomBytes } from 'node:crypto'
import type { ApprovalRecorder } from '../access/approval-log.ts'
import { nobodyToAsk, type ApprovalPolicy, type Approver } from '../access/approval.ts'
import { gateWorkspace } from '../access/gated-workspace.ts'
import type { ModeDefinition } from '../access/modes.ts'
import type { PermissionRules } from '../access/permission-rules.ts'
import { SessionAccess } from '../access/session-access.ts'
import type { EitriConfig } from '../config/config-file.ts'
import { parentEnvironment } from '../config/environment.ts'
import { JailProgramSession } from '../jail/jail-program-session.ts'
import type { Store } from '../store/store.ts'
import { ACCESS_LEVELS, type AccessLevel, type CommandJudgement } from '../ports/access-context.ts'
import type { DriveAccess } from '../ports/drive-access.ts'
import { runDrive } from './run-drive.ts'
import { isolatedDrive } from './isolated-drive.ts'
import type { LineControl } from '../ports/line-control.ts'
import type { ToolContext } from '../tool/tool-context.ts'
import { PERSON_PRINCIPAL, runPrincipal } from '../workspace/fork-owner.ts'
import { MAIN_LINE } from '../ports/line-control.ts'
import type { Principal, WorkspaceLines } from '../workspace/workspace-lines.ts'
import type { EvalSandbox } from './lazy-eval-sandbox.ts'
import type { LineSurface, LineSurfaces } from './line-surfaces.ts'
import { sessionCheckpoints } from './session-checkpoints.ts'
import { sessionLineControl } from './session-lines.ts'
import { storeRunLog } from './store-run-log.ts'
import { sessionAgents } from './session-agents.ts'
import type { RunLeases } from '../agent/run-lease.ts'
import type { Roster } from '../agent/roster.ts'
import type { ProgramFactory } from '../agent/program.ts'
import type { RunTools, RunToolScope } from '../agent/run-tools.ts'
import type { Toolset } from '../tool/toolset.ts'
import { runScopedAgents } from './run-scoped-agents.ts'
import {
  goneKnowledge,
  goneLineError,
  gonePrograms,
  goneTasks,
  goneWorkspace,
} from './gone-line.ts'
import { unconfinedState } from './unconfined-state.ts'

/** The top of the access ladder: a trusted session's ceiling leaves access to each definition. */
const TOP_ACCESS = ACCESS_LEVELS[ACCESS_LEVELS.length - 1] as AccessLevel

/** What one session may set for itself (an MCP connection gets its own approver). */
export interface SessionOptions {
  readonly access?: AccessLevel
  readonly mode?: string
  readonly approval?: ApprovalPolicy
  readonly approver?: Approver
  /** Caps inherited from a parent: the session never gets wider access. */
  readonly caps?: readonly AccessLevel[]
  /**
   * Start on a fresh fork of main, so nothing reaches the folder until a person merges it. For
   * a principal other than the person, main is then reached only through a person.
   */
  readonly isolate?: boolean
  /**
   * Who acts: the owner of the forks the session makes and what it may see.
   * @default the person, who sees every fork
   */
  readonly principal?: Principal
  /** The display name of the session's fork under `isolate` (a client's name). @default 'session' */
  readonly label?: string
  /**
   * A person at the terminal (`eitri run`, `eitri call`): the session's root Runs get the
   * authority their definitions ask for, bounded only by the workshop's tools, not by the
   * session's access; and it may change a Run's world with the line tools (amend it before a
   * merge), which no connection may.
   * @default false: a Run gets no more than the session holds, and its world changes only
   *   through it
   */
  readonly trusted?: boolean
}

/** The calls of one connection or caller, with its own background jobs, access and line. */
export interface WorkshopSession extends AsyncDisposable {
  /** The session's id, recorded with the snapshots its calls take. */
  readonly id: string
  /** The session's access: setting, mode, approvals. */
  readonly access: SessionAccess
  /** The lines of work and the one this session's tools act on. */
  readonly lines: LineControl
  /** A context for one call of this session. */
  readonly context: (options?: { signal?: AbortSignal }) => ToolContext
  /** Ends the session's background jobs and eval sessions. Idempotent. */
  close(): Promise<void>
}

/** What a session is made from: the workshop's shared parts. */
export interface SessionParts {
  readonly lines: WorkspaceLines
  readonly surfaces: LineSurfaces
  readonly main: LineSurface
  readonly store: Store
  readonly drive: DriveAccess
  readonly evaluation: EvalSandbox
  readonly judge: (command: string, options: { escalate?: boolean }) => Promise<CommandJudgement>
  readonly rules: PermissionRules
  readonly modes: readonly ModeDefinition[]
  readonly recorder: ApprovalRecorder
  readonly config: EitriConfig
  readonly defaults: SessionOptions
  /** The host folder of main, where an approved run outside the jail happens. */
  readonly mainRoot: string
  /** The workshop's tools: what a session holds, and so hands on to its Runs. */
  readonly toolset: Toolset
  /** The roster hires use when they name none (the configuration's `agents`). */
  readonly roster: Roster
  /** The workshop's lease keeper of Runs, started at the first hire. */
  readonly leases: () => Promise<RunLeases>
  /** The program of each kind its Runs may run. @default the runtime's (echo and scripted) */
  readonly programs?: Readonly<Record<string, ProgramFactory>> | undefined
}

/** A session that is a Run's tool calls: pinned to its world, holding only its tools. */
interface RunSession {
  readonly scope: RunToolScope
  readonly toolset: Toolset
  /** The Runs it reads: its hiring session's (run-fence.ts), or every Run when unset. */
  readonly hiredBy: string | undefined
}

/** Opens a session. */
export async function createSession(
  parts: SessionParts,
  sessionOptions: SessionOptions,
  onClose: (session: WorkshopSession) => void,
  run?: RunSession,
): Promise<WorkshopSession> {
  const options = { ...parts.defaults, ...sessionOptions }
  // 64 random bits: a session's Runs are fenced by its id (hiredBy), so two sessions must never share one.
  const id = `s-${randomBytes(8).toString('hex')}`
  const checkpoints = sessionCheckpoints(parts.lines.snapshots, id)
  let surface: LineSurface = parts.main
  const programsOf = (line: LineSurface): JailProgramSession =>
    new JailProgramSession(
      line.jail,
      { cwd: parts.mainRoot, environment: parentEnvironment() },
      // A background job on main goes on changing it after its call answered.
      line.line === MAIN_LINE ? { onJob: checkpoints.job } : {},
    )
  let programs = programsOf(surface)
  // A Run's evals call its own tools only, never the rest of the workshop's.
  const evaluator = parts.evaluation.owner(run === undefined ? {} : { toolset: run.toolset })
  const access = new SessionAccess({
    setting:
      options.access ?? (parts.config.access as AccessLevel | undefined) ?? 'workspace-write',
    mode: options.mode ?? 'default',
    modes: parts.modes,
    caps: options.caps ?? [],
    approval: options.approval ?? parts.config.approval ?? 'on-request',
    rules: parts.rules,
    approver: checkpoints.approver(options.approver ?? nobodyToAsk),
    recorder: parts.recorder,
    judge: parts.judge,
    // A run outside the jail happens in main's folder, whatever line the session is on.
    unconfinedState: async ({ command }) =>
      unconfinedState({
        tree: await parts.lines.history.treeOf(await parts.lines.commit(MAIN_LINE)),
        main: parts.lines.main,
        command,
        leftOut: (relative) => parts.lines.history.leavesOut(relative),
      }),
    onNarrow: (level) => programs.stopJobsWiderThan(level),
  })
  const switchTo = async (line: string): Promise<void> => {
    if (line === surface.line) return
    const next = await parts.surfaces.surface(line)
    await programs.close()
    surface = next
    programs = programsOf(surface)
  }
  const principal = options.principal ?? PERSON_PRINCIPAL
  // The session's one fork: made at the start under `isolate`, and again if it discards it.
  const isolate = async (): Promise<void> =>
    switchTo(
      (
        await parts.lines.fork({
          from: MAIN_LINE,
          by: principal,
          label: options.label ?? 'session',
        })
      ).id,
    )
  let current = access.snapshot()
  const lines = sessionLineControl({
    lines: parts.lines,
    surfaces: parts.surfaces,
    current: () => surface.line,
    switchTo,
    access: () => current,
    principal,
    guardMain: options.isolate === true && !principal.seesEveryFork,
    isolate,
    session: id,
    changesRunWorlds: options.trusted === true,
    runWorld: run?.scope.line,
    runsHiredFrom: (line) => agents.runsHiredFrom(line),
    cancelRunsOf: (line) => agents.cancelRunsOf(line),
  })
  if (run !== undefined) await switchTo(run.scope.line)
  else if (options.isolate === true) await isolate()
  // A session that does not see every fork reads only its own Runs, and its Runs only its.
  const hiredBy = run !== undefined ? run.hiredBy : principal.seesEveryFork ? undefined : id
  const agents =
    run !== undefined
      ? {
          ...runScopedAgents(run.scope, parts.roster),
          runsHiredFrom: () => [],
          cancelRunsOf: async () => undefined,
          close: async () => undefined,
        }
      : sessionAgents({
          store: parts.store,
          lines: parts.lines,
          leases: parts.leases,
          principal,
          line: () => surface.line,
          ceiling: () => ({
            access: options.trusted === true ? TOP_ACCESS : access.effective,
            tools: parts.toolset.names(),
            programKinds: undefined,
            depth: 0,
          }),
          // Asked at merge time, so the approval policy in force then decides.
          approveMerge: (request) =>
            access.snapshot().approve?.(request) ??
            Promise.resolve({
              type: 'unavailable' as const,
              reason: 'nobody is here to approve a merge into main',
            }),
          roster: parts.roster,
          actor: id,
          maxActive: parts.config.runs.maxActive,
          budgetDollars: parts.config.runs.sessionBudgetDollars,
          maxDepth: parts.config.runs.maxDepth,
          programs: parts.programs,
          hiredBy,
          // A Run's tool calls act as the Run, in its world, asking this session's person.
          runTools: (scope) =>
            openRunTools(
              parts,
              scope,
              {
                ...(options.approval === undefined ? {} : { approval: options.approval }),
                ...(options.approver === undefined ? {} : { approver: options.approver }),
              },
              hiredBy,
            ),
        })
  // A Run reads the workspace's drive and never changes it: its effects stay in its world.
  // An isolated session reaches it as it reaches main: changes ask a person (decision 0052).
  const drive = run === undefined ? parts.drive : runDrive(parts.drive, run.scope.runId)
  const guardDrive = run === undefined && options.isolate === true && !principal.seesEveryFork
  const session: WorkshopSession = {
    id,
    access,
    lines,
    context: ({ signal } = {}) => {
      current = access.snapshot()
      // A caller that passes no signal has no way to cancel the call: it runs to its end.
      const callSignal = signal ?? new AbortController().signal
      // The one place a call's line is bound: a fork discarded or pruned by a person is
      // reached by no tool, each answering why and where to go on.
      const gone = parts.lines.gone(surface.line)
      const refusal = gone === undefined ? undefined : goneLineError(gone)
      return {
        signal: callSignal,
        workspace:
          refusal === undefined
            ? gateWorkspace(surface.view, current, callSignal)
            : goneWorkspace(surface.line, refusal, (text) => surface.view.redact(text)),
        access: current,
        lines,
        drive: guardDrive ? isolatedDrive(drive, () => current, callSignal) : drive,
        programs: refusal === undefined ? programs : gonePrograms(programs, refusal),
        evaluator,
        tasks:
          refusal === undefined
            ? parts.store.tasks(surface.line)
            : goneTasks(surface.line, refusal),
        knowledge:
          refusal === undefined
            ? parts.store.knowledge(surface.line)
            : goneKnowledge(surface.line, refusal),
        runs: storeRunLog(parts.store, hiredBy),
        agents,
        ...(run?.scope.modelRun === undefined ? {} : { modelRun: run.scope.modelRun }),
        // A Run's calls never act on main, so there is nothing of main to snapshot.
        ...(run === undefined ? { checkpoints: checkpoints.checkpoints } : {}),
      }
    },
    close: async () => {
      onClose(session)
      await agents.close()
      await programs.close()
      await evaluator.close()
    },
    [Symbol.asyncDispose]: () => session.close(),
  }
  return session
}

/**
 * The tools of one Run: a session pinned to the Run's world, as the Run's principal, at the
 * Run's access (never above it), holding exactly the Run's tools; each call goes through the
 * tool contract there. Closing them ends the jobs and eval sessions its calls left.
 */
async function openRunTools(
  parts: SessionParts,
  scope: RunToolScope,
  hiring: Pick<SessionOptions, 'approval' | 'approver'>,
  hiredBy: string | undefined,
): Promise<RunTools> {
  const held = new Set(parts.toolset.names())
  // Fail closed: a Run bound to no list of tools gets none.
  const toolset = parts.toolset.narrow((scope.authority.tools ?? []).filter((t) => held.has(t)))
  const session = await createSession(
    parts,
    {
      ...hiring,
      access: scope.authority.access,
      caps: [scope.authority.access],
      mode: 'default',
      principal: runPrincipal(scope.runId),
      isolate: false,
      trusted: false,
    },
    () => undefined,
    { scope, toolset, hiredBy },
  )
  return {
    offered: () => toolset.offeredIn(session.context()),
    readOnly: (name) => toolset.get(name)?.readOnly === true,
    call: (call, { signal }) => toolset.run(call, session.context({ signal })),
    close: () => session.close(),
  }
}
