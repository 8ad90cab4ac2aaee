/**
 * @module tool/access-context
 * The access in force for one call, as tools see it. The access layer implements it.
 */

/** The access levels, narrowest first: each allows everything the one before it does. */
export const ACCESS_LEVELS = Object.freeze(['read-only', 'workspace-write', 'full-access'] as const)

/** The access ladder: `read-only` < `workspace-write` < `full-access`. */
export type AccessLevel = (typeof ACCESS_LEVELS)[number]

/**
 * Whether a command runs at once, after a question, or never. In rising severity:
 * - `allow`: it only reads, and cannot run another program or write; it runs without asking
 *   even under `--approval untrusted`.
 * - `jail`: it runs at once, confined by the jail (the jail, not this policy, is the boundary).
 * - `ask`: it is legitimate but destroys work or cannot be judged; a person must approve it.
 * - `deny`: it never runs.
 */
export type CommandVerdict = 'allow' | 'jail' | 'ask' | 'deny'

/** A verdict with the rule that decided it and a reason a model can act on. */
export interface CommandFinding<Rule extends string = string> {
  readonly verdict: CommandVerdict
  readonly rule: Rule
  /** Names what was found and what to do instead; read by models. */
  readonly reason: string
}

/** One simple command found in a shell command, judged on its own. */
export interface CommandPart<Rule extends string = string> extends CommandFinding<Rule> {
  /** The simple command as written. */
  readonly command: string
}

/** The verdict of a whole shell command: the most severe of its parts'. */
export interface CommandJudgement<Rule extends string = string> extends CommandFinding<Rule> {
  readonly parts: readonly CommandPart<Rule>[]
}

/** Whether a command may run, and where. */
export type CommandAuthorization =
  | { readonly type: 'run'; readonly confined: true }
  /** Approved by a person to run outside the jail (full access for this one call). */
  | { readonly type: 'run'; readonly confined: false; readonly approvedBy: string }
  | {
      readonly type: 'refused'
      readonly rule: string
      readonly reason: string
      readonly needsApproval: boolean
    }

/**
 * The answer to a request for a person's approval: approved; refused (by the person, or by
 * policy); or `unavailable` when no person could be asked (no terminal, a client that cannot
 * show prompts). Each `reason` is a sentence for the model or the record.
 */
export type ApprovalAnswer =
  | { readonly type: 'approved' }
  | { readonly type: 'refused'; readonly reason: string }
  | { readonly type: 'unavailable'; readonly reason: string }

/** What a write does to its path, for the person asked and the record. */
export type PathChange = 'write-file' | 'make-folder' | 'remove' | 'create-symlink'

/** A file operation to authorize. */
export interface PathAction {
  /** The tool that asks (`edit_file`, `js_eval fs.writeFile`). */
  readonly tool: string
  readonly operation: 'read' | 'write'
  /** For a write, what it does. @default 'write-file' */
  readonly change?: PathChange
  /** Workspace-relative for paths inside; absolute for a path outside. */
  readonly path: string
  /** Why the path policy refused it, when it did: the action needs more than the policy gives. */
  readonly refusal?: {
    readonly code: 'protected_path' | 'path_outside_workspace'
    readonly reason: string
  }
  /** The call's signal: ending the call withdraws a question put to a person. */
  readonly signal: AbortSignal
}

/** Whether a file operation may go ahead, and with which exemption. */
export type PathAuthorization =
  | { readonly type: 'allowed'; readonly exemption?: 'protected' | 'outside' }
  | {
      readonly type: 'refused'
      readonly code:
        'read_only_access' | 'permission_denied' | 'protected_path' | 'path_outside_workspace'
      readonly reason: string
    }

/** The outcome of a mode switch: `refused` when a person did not approve it. */
export interface ModeChange {
  readonly changed: boolean
  readonly refused: boolean
  readonly message: string
}

/** The session's mode, as tools may inspect and change it. */
export interface ModeControl {
  /** The current mode, its cap, the session setting and the effective access. */
  describe(): {
    mode: string
    cap: AccessLevel | undefined
    setting: AccessLevel
    effective: AccessLevel
    modes: readonly { name: string; description: string; access?: AccessLevel }[]
  }
  /**
   * Switches mode at the next call: narrowing at once; widening only with a person's approval
   * (`ask` asks even when not widening, as leaving plan mode always does).
   */
  set(
    mode: string,
    options: { signal: AbortSignal; reason?: string; ask?: boolean },
  ): Promise<ModeChange>
}

/** The access in force for a call, fixed when the call starts. */
export interface AccessContext {
  /** The effective level: the minimum of every cap in force. */
  readonly level: AccessLevel
  /** The mode in force (`default` when none). */
  readonly mode: string
  /** True when a cap below the session setting is in force (a mode's or a parent's). */
  readonly capped: boolean
  /** Judges a shell command before it runs; never throws. */
  judgeCommand(
    command: string,
    options?: { readonly escalate?: boolean },
  ): Promise<CommandJudgement>
  /** Decides, asking a person if policy says so, whether a shell command runs. */
  authorizeCommand(request: {
    readonly command: string
    readonly escalate?: { readonly reason: string }
    readonly signal: AbortSignal
  }): Promise<CommandAuthorization>
  /** Decides, asking a person if policy says so, whether a file operation goes ahead. */
  authorizePath(action: PathAction): Promise<PathAuthorization>
  /** The session's modes. */
  readonly modes?: ModeControl
  /**
   * Asks a person (as the approval policy allows) to approve an action only a person may take,
   * such as merging into the user's folder.
   */
  readonly approve?: (request: {
    readonly tool: string
    readonly input: unknown
    readonly reason: string
    readonly summary: string
    readonly signal: AbortSignal
  }) => Promise<ApprovalAnswer>
}
