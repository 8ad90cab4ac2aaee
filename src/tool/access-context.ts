/**
 * @module tool/access-context
 * The access in force for one call, as tools see it. The access layer implements it.
 */

/** The access ladder: each level allows everything the one before it does. */
export type AccessLevel = 'read-only' | 'workspace-write' | 'full-access'

/** What the command policy decides about a shell command. */
export type CommandVerdict = 'allow' | 'jail' | 'ask' | 'deny'

/** A verdict with the rule that decided it and a reason a model can act on. */
export interface CommandJudgement {
  readonly verdict: CommandVerdict
  readonly rule: string
  readonly reason: string
}

/** The access in force for a call. */
export interface AccessContext {
  /** The effective level: the minimum of every cap in force. */
  readonly level: AccessLevel
  /** Judges a shell command before it runs; never throws. */
  judgeCommand(
    command: string,
    options?: { readonly escalate?: boolean },
  ): Promise<CommandJudgement>
}
