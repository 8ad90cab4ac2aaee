/**
 * @module access/session-access
 * The access of one session: a setting, a mode, the caps inherited from parents, an approval
 * policy, rules and an approver. Every door asks it; each call gets a snapshot fixed when the
 * call starts, so a mode switch takes effect at the next call.
 */
import { randomUUID } from 'node:crypto'
import { EitriError } from '../errors/eitri-error.ts'
import type {
  AccessContext,
  AccessLevel,
  CommandAuthorization,
  CommandJudgement,
  ModeChange,
  ModeControl,
  PathAction,
  PathAuthorization,
} from '../ports/access-context.ts'
import { isWider, narrowest } from './access-level.ts'
import { decideCommand } from './command-decision.ts'
import { decidePathAction } from './path-action-decision.ts'
import type { ApprovalRecorder } from './approval-log.ts'
import { ApprovalGate } from './approval-gate.ts'
import {
  nobodyToAsk,
  type ApprovalPolicy,
  type ApprovalRequest,
  type Approver,
} from './approval.ts'
import { DEFAULT_MODE, modeCatalog, type ModeDefinition } from './modes.ts'
import { PermissionRules } from './permission-rules.ts'

/** What a session's access is made of. */
/** Added to the question about a command whose state its words cannot tell. */
export const ONCE_NOTE =
  ' (eitri cannot tell from its words all it runs: a name the shell builds, one read from another folder, or more than it reads for a key; so an approval holds for this run only, and it is asked again next time)'

export interface AccessOptions {
  /** The session setting. @default 'workspace-write' */
  readonly setting?: AccessLevel
  /** The starting mode. @default 'default' */
  readonly mode?: string
  /** The modes a session may use. @default default and plan */
  readonly modes?: readonly ModeDefinition[]
  /** Caps inherited from parents: a child never gets wider access than its parent. */
  readonly caps?: readonly AccessLevel[]
  /** @default 'on-request' */
  readonly approval?: ApprovalPolicy
  readonly rules?: PermissionRules
  /** Who decides what policy leaves to a person. @default nobody: such actions are refused */
  readonly approver?: Approver
  /** Where every decision is recorded. */
  readonly recorder?: ApprovalRecorder
  /** The command policy. @default every command runs confined */
  readonly judge?: (command: string, options: { escalate?: boolean }) => Promise<CommandJudgement>
  /**
   * The state of the files a command run outside the jail meets (main's tree): "approved for
   * the session" covers such a command only while it is unchanged, since the command runs
   * whatever the scripts it names hold by then.
   */
  readonly unconfinedState?: (options: {
    readonly signal: AbortSignal
    /** The command: the ignored files it names are part of its state. */
    readonly command: string
  }) => Promise<{
    readonly files: string
    /** The state cannot be told from the words: an approval for the session holds this once. */
    readonly once: boolean
  }>
  /** Called when access narrows, to stop background jobs started with wider access; answers their ids. */
  readonly onNarrow?: (level: AccessLevel) => Promise<readonly string[]>
}

/** What "approve for this session" covers for a command run outside the jail. */
export const SAME_FILES_SCOPE =
  "this exact command runs outside the jail again without asking only while main's files stay exactly as they are now (of the files .gitignore ignores, those the command names); any change to them (by a tool, a jailed command or you) asks again"

/** The access state of one session. */
export class SessionAccess {
  readonly #options: AccessOptions
  readonly #modes: ReadonlyMap<string, ModeDefinition>
  readonly #rules: PermissionRules
  readonly #gate: ApprovalGate
  #setting: AccessLevel
  #mode: ModeDefinition

  /** @throws EitriError `config_invalid` for an unknown starting mode. */
  constructor(options: AccessOptions = {}) {
    this.#options = options
    this.#modes = new Map((options.modes ?? modeCatalog()).map((mode) => [mode.name, mode]))
    this.#rules = options.rules ?? new PermissionRules()
    this.#gate = new ApprovalGate({
      policy: options.approval ?? 'on-request',
      approver: options.approver ?? nobodyToAsk,
      recorder: options.recorder,
    })
    this.#setting = options.setting ?? 'workspace-write'
    this.#mode = this.#modeNamed(options.mode ?? DEFAULT_MODE.name)
  }

  /** The session setting (never changed by a mode). */
  get setting(): AccessLevel {
    return this.#setting
  }

  get mode(): ModeDefinition {
    return this.#mode
  }

  /** The effective access: the minimum of the setting, the mode's cap and inherited caps. */
  get effective(): AccessLevel {
    return narrowest(this.#setting, this.#mode.access, ...(this.#options.caps ?? []))
  }

  /** The name by which refusals refer to the state that caps access. */
  get #capName(): string {
    return this.#mode.access !== undefined ? `${this.#mode.name} mode` : 'this session'
  }

  /** True when a mode or a parent caps access below full access. */
  get capped(): boolean {
    return [this.#mode.access, ...(this.#options.caps ?? [])].some(
      (cap) => cap !== undefined && cap !== 'full-access',
    )
  }

  /**
   * Changes the setting. Narrowing is immediate; widening needs a person.
   * A mode's cap still applies on top: a setting changed during plan re-emerges when plan ends.
   */
  async changeSetting(
    level: AccessLevel,
    options: { signal: AbortSignal },
  ): Promise<{ changed: boolean; message: string }> {
    if (level === this.#setting)
      return { changed: false, message: `The access setting is already ${level}.` }
    if (isWider(level, this.#setting)) {
      const decision = await this.#ask(
        {
          tool: 'access_set',
          input: { access: level },
          reason: `widen the session's access from ${this.#setting} to ${level}`,
          access: level,
          summary: `access ${this.#setting} → ${level}`,
          dangerous: level === 'full-access',
        },
        options.signal,
      )
      if (decision !== undefined) return { changed: false, message: `Not changed: ${decision}` }
    }
    const before = this.effective
    this.#setting = level
    return {
      changed: true,
      message: `Access setting is now ${level}.${await this.#stopWiderJobs(before)}`,
    }
  }

  /** A snapshot for one call. */
  snapshot(): AccessContext {
    const level = this.effective
    const mode = this.#mode.name
    const capped = this.capped
    return {
      level,
      mode,
      capped,
      judgeCommand: (command, options = {}) => this.#judge(command, options),
      authorizeCommand: (request) => this.#authorizeCommand(request, level, capped),
      authorizePath: (action) => this.#authorizePath(action, level),
      modes: this.#modeControl(),
      approve: (request) =>
        this.#gate.decide(
          {
            tool: request.tool,
            input: request.input,
            reason: request.reason,
            access: level,
            summary: request.summary,
            dangerous: false,
          },
          request.signal,
        ),
    }
  }

  #modeControl(): ModeControl {
    return {
      describe: () => ({
        mode: this.#mode.name,
        cap: this.#mode.access,
        setting: this.#setting,
        effective: this.effective,
        modes: [...this.#modes.values()],
      }),
      set: (name, options) => this.setMode(name, options),
    }
  }

  /**
   * Switches mode at the next call. Narrowing is immediate; a switch to a wider cap (leaving
   * plan) goes through the approver: a model alone can never lift its own cap.
   */
  async setMode(
    name: string,
    options: { signal: AbortSignal; reason?: string; ask?: boolean },
  ): Promise<ModeChange> {
    const next = this.#modes.get(name)
    if (next === undefined) {
      throw new EitriError(
        'invalid_input',
        `unknown mode "${name}": available modes: ${[...this.#modes.keys()].join(', ')}`,
      )
    }
    if (next.name === this.#mode.name) {
      return { changed: false, refused: false, message: `Already in ${name} mode.` }
    }
    const before = this.effective
    const after = narrowest(this.#setting, next.access, ...(this.#options.caps ?? []))
    if (isWider(after, before) || options.ask === true) {
      const decision = await this.#ask(
        {
          tool: 'mode_set',
          input: {
            mode: name,
            ...(options.reason === undefined ? {} : { reason: options.reason }),
          },
          reason:
            options.reason ??
            `switch from ${this.#mode.name} mode (${before}) to ${name} mode (${after})`,
          access: after,
          summary: `mode ${this.#mode.name} → ${name}`,
          dangerous: after === 'full-access',
        },
        options.signal,
      )
      if (decision !== undefined) {
        return {
          changed: false,
          refused: true,
          message: `Still in ${this.#mode.name} mode: ${decision}`,
        }
      }
    }
    this.#mode = next
    return {
      changed: true,
      refused: false,
      message: `Switched to ${name} mode (access ${this.effective}); it applies from the next call.${await this.#stopWiderJobs(before)}`,
    }
  }

  async #stopWiderJobs(before: AccessLevel): Promise<string> {
    const after = this.effective
    if (!isWider(before, after) || this.#options.onNarrow === undefined) return ''
    const stopped = await this.#options.onNarrow(after)
    return stopped.length === 0
      ? ''
      : ` Stopped background jobs started with wider access: ${stopped.join(', ')}.`
  }

  async #judge(command: string, options: { escalate?: boolean }): Promise<CommandJudgement> {
    if (this.#options.judge === undefined) {
      const finding = { verdict: 'jail', rule: 'default', reason: 'runs confined' } as const
      return { ...finding, parts: [{ ...finding, command }] }
    }
    return this.#options.judge(command, options)
  }

  async #authorizeCommand(
    request: {
      readonly command: string
      readonly escalate?: { readonly reason: string }
      readonly signal: AbortSignal
    },
    level: AccessLevel,
    capped: boolean,
  ): Promise<CommandAuthorization> {
    const judgement = await this.#judge(request.command, {
      escalate: request.escalate !== undefined,
    })
    const parts = judgement.parts.map((part) => part.command)
    const subject = {
      kind: 'command' as const,
      parts: parts.length === 0 ? [request.command] : parts,
    }
    const decision = decideCommand({
      command: request.command,
      judgement,
      escalate: request.escalate,
      level,
      capped,
      capName: this.#capName,
      approval: this.#options.approval ?? 'on-request',
      deniedBy: this.#rules.denied(subject)?.source,
      allowedByRule: this.#rules.allowed(subject) !== undefined,
    })
    if (decision.type === 'run') return decision
    if (decision.type === 'refuse') return refused(decision.rule, decision.reason)
    const stateOf = decision.confined ? undefined : this.#options.unconfinedState
    const state = { signal: request.signal, command: request.command }
    const shown = stateOf === undefined ? undefined : await stateOf(state)
    const asked =
      shown === undefined
        ? decision.request
        : {
            ...decision.request,
            // The files are part of the action: a script rewritten since is another command.
            // One the words cannot key is never the same action twice.
            input: {
              ...(decision.request.input as object),
              files: shown.once ? `${shown.files} ${randomUUID()}` : shown.files,
            },
            // The person is told: "approve for the session" would not hold for the next run.
            ...(shown.once && { reason: `${decision.request.reason}${ONCE_NOTE}` }),
            sessionScope: SAME_FILES_SCOPE,
          }
    const denial = await this.#ask(asked, request.signal)
    if (denial !== undefined) {
      const { rule, reason } = decision.denied
      return refused(rule, reason === undefined ? denial : `${reason}; ${denial}`, true)
    }
    // What runs is what the person was asked about: files changed while the question was open
    // (a tool call sent meanwhile) are not what they approved.
    if (stateOf !== undefined && (await stateOf(state)).files !== shown?.files) {
      return refused(
        'escalation-changed',
        "the workspace's files changed while the person was deciding, so what would run is not what they approved; run the command again to ask again",
        true,
      )
    }
    return decision.confined
      ? { type: 'run', confined: true }
      : { type: 'run', confined: false, approvedBy: this.#gate.lastApprover }
  }

  async #authorizePath(action: PathAction, level: AccessLevel): Promise<PathAuthorization> {
    const subject = { kind: 'path' as const, operation: action.operation, path: action.path }
    const allowRule = this.#rules.allowed(subject)
    const decision = decidePathAction({
      action,
      level,
      capName: this.#capName,
      readOnlyMode: this.#mode.access !== undefined ? this.#mode.name : undefined,
      approval: this.#options.approval ?? 'on-request',
      deniedBy: this.#rules.denied(subject)?.source,
      allowedBy:
        allowRule === undefined
          ? undefined
          : { source: allowRule.source, withoutApproval: allowRule.withoutApproval },
    })
    if (decision.type !== 'ask') return decision
    const denial = await this.#ask(decision.request, action.signal)
    if (denial !== undefined) return { type: 'refused', code: decision.deniedCode, reason: denial }
    return decision.exemption === undefined
      ? { type: 'allowed' }
      : { type: 'allowed', exemption: decision.exemption }
  }

  /**
   * Asks a person unless the policy forbids asking or the same action was approved for the
   * session. Records the decision. Answers undefined when approved, else why not.
   */
  #ask(request: ApprovalRequest, signal: AbortSignal): Promise<string | undefined> {
    return this.#gate.ask(request, signal)
  }

  #modeNamed(name: string): ModeDefinition {
    const mode = this.#modes.get(name)
    if (mode === undefined) {
      throw new EitriError(
        'config_invalid',
        `unknown mode "${name}": available modes: ${[...this.#modes.keys()].join(', ')}`,
      )
    }
    return mode
  }
}

function refused(rule: string, reason: string, needsApproval = false): CommandAuthorization {
  return { type: 'refused', rule, reason, needsApproval }
}
