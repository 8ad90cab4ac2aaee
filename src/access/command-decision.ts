/**
 * @module access/command-decision
 * Whether a shell command runs, is refused, or needs a person: one pure function of the
 * policy's judgement and the session's access, so every case reads as a row of a table
 * (command-decision.test.ts). The session asks the person and records; it decides nothing.
 */
import type { AccessLevel, CommandJudgement } from '../ports/access-context.ts'
import type { ApprovalPolicy, ApprovalRequest } from './approval.ts'

/** What the decision is made from. */
export interface CommandDecisionInput {
  readonly command: string
  readonly judgement: CommandJudgement
  /** Asked to run outside the jail, with why. */
  readonly escalate?: { readonly reason: string } | undefined
  /** The effective access level of the session. */
  readonly level: AccessLevel
  /** Whether a mode or a parent caps the access (escalation is then out of reach). */
  readonly capped: boolean
  /** What caps it, for messages: "plan mode", "this session's access", … */
  readonly capName: string
  readonly approval: ApprovalPolicy
  /** The configuration's deny rule that matches the command, if one does. */
  readonly deniedBy?: string | undefined
  /** Whether a configuration allow rule matches the command. */
  readonly allowedByRule: boolean
}

/** The decision: run (in the jail or, approved, outside), refuse, or ask a person first. */
export type CommandDecision =
  | { readonly type: 'run'; readonly confined: true }
  | {
      readonly type: 'refuse'
      readonly rule: string
      readonly reason: string
    }
  | {
      readonly type: 'ask'
      readonly request: ApprovalRequest
      /** Where it runs once approved. */
      readonly confined: boolean
      /** The rule a denial is reported under, and the reason that prefixes the person's. */
      readonly denied: { readonly rule: string; readonly reason?: string }
    }

/**
 * Decides a command. In order: a deny rule of the configuration; the policy's `deny`; an
 * escalation (refused when capped, else a person decides, for a run outside the jail); no
 * person needed (`allow`, or `jail` unless the approval policy is `untrusted`); `ask` under
 * read-only access (refused: it would change the workspace); an allow rule; else a person.
 *
 * @example
 * decideCommand({ command: 'ls', judgement, level: 'workspace-write', capped: false, … })
 * // { type: 'run', confined: true }
 */
export function decideCommand(input: CommandDecisionInput): CommandDecision {
  const { judgement, command } = input
  if (input.deniedBy !== undefined) {
    return refuse('config-deny', `denied by the rule ${input.deniedBy} in eitri's configuration`)
  }
  if (judgement.verdict === 'deny') return refuse(judgement.rule, judgement.reason)
  if (input.escalate !== undefined) {
    if (input.capped) {
      return refuse(
        'escalation-capped',
        `escalation is not available in ${input.capName} — put the wider step in the plan, or run the command without escalate`,
      )
    }
    return {
      type: 'ask',
      request: {
        tool: 'shell',
        input: { command, escalate: input.escalate },
        reason: input.escalate.reason,
        access: 'full-access',
        // It runs in the person's own folder whatever line the session is on: a fork's files
        // are in eitri's history, not in a folder, so the question says where.
        summary: `run OUTSIDE the jail, in your folder (main, not a fork) (dangerous): ${command}`,
        dangerous: true,
      },
      confined: false,
      denied: { rule: 'escalation-denied' },
    }
  }
  const needsPerson =
    judgement.verdict === 'ask' || (input.approval === 'untrusted' && judgement.verdict !== 'allow')
  if (!needsPerson) return { type: 'run', confined: true }
  if (input.level === 'read-only' && judgement.verdict === 'ask') {
    return refuse(
      judgement.rule,
      `${judgement.reason}; it would change the workspace, which ${input.capName} keeps read-only`,
    )
  }
  if (input.allowedByRule) return { type: 'run', confined: true }
  return {
    type: 'ask',
    request: {
      tool: 'shell',
      input: { command },
      reason: judgement.reason,
      access: input.level,
      summary: command,
      dangerous: false,
      rule: `shell(${command})`,
    },
    confined: true,
    denied: { rule: judgement.rule, reason: judgement.reason },
  }
}

function refuse(rule: string, reason: string): CommandDecision {
  return { type: 'refuse', rule, reason }
}
