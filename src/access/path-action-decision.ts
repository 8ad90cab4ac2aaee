/**
 * @module access/path-action-decision
 * Whether a file operation goes ahead, is refused, or needs a person: one pure function of
 * the path policy's finding and the session's access, tested as a table
 * (path-action-decision.test.ts). The session asks the person and records; it decides nothing.
 */
import type {
  AccessLevel,
  PathAction,
  PathAuthorization,
  PathChange,
} from '../ports/access-context.ts'
import type { ApprovalPolicy, ApprovalRequest } from './approval.ts'

/** What the decision is made from. */
export interface PathActionDecisionInput {
  /** The action without its signal: deciding waits for nothing. */
  readonly action: Omit<PathAction, 'signal'>
  /** The effective access level of the session. */
  readonly level: AccessLevel
  /** What caps it, for messages: "plan mode", "this session's access", … */
  readonly capName: string
  /** The mode that makes the session read-only, when one does (it can be left). */
  readonly readOnlyMode?: string | undefined
  readonly approval: ApprovalPolicy
  /** The configuration's deny rule that matches the path, if one does. */
  readonly deniedBy?: string | undefined
  /** The configuration's allow rule that matches the path, if one does. */
  readonly allowedBy?: { readonly source: string; readonly withoutApproval: boolean } | undefined
}

type Refusal = Extract<PathAuthorization, { type: 'refused' }>

/** The decision: go ahead (perhaps exempt from a protection), refuse, or ask a person first. */
export type PathActionDecision =
  | Extract<PathAuthorization, { type: 'allowed' }>
  | Refusal
  | {
      readonly type: 'ask'
      readonly request: ApprovalRequest
      /** The exemption a yes grants. */
      readonly exemption?: 'protected' | 'outside'
      /** The code a no is reported under. */
      readonly deniedCode: Refusal['code']
    }

/**
 * Decides a file operation. In order: a deny rule of the configuration; a read (the path
 * policy's refusal stands); a write under read-only access; a write outside the workspace
 * (full access and a person only); a protected path (an allow rule, with or without a
 * person); the `untrusted` approval policy (a person, unless an allow rule matches).
 */
export function decidePathAction(input: PathActionDecisionInput): PathActionDecision {
  const { action } = input
  if (input.deniedBy !== undefined) {
    return {
      type: 'refused',
      code: 'permission_denied',
      reason: `${action.path} is denied by the rule ${input.deniedBy} in eitri's configuration`,
    }
  }
  if (action.operation === 'read')
    return action.refusal === undefined
      ? { type: 'allowed' }
      : { type: 'refused', ...action.refusal }
  if (input.level === 'read-only') {
    return {
      type: 'refused',
      code: 'read_only_access',
      reason: `writing ${action.path} needs workspace-write access, and ${input.capName} is read-only. ${input.readOnlyMode !== undefined ? `Leave ${input.readOnlyMode} mode with exit_plan_mode (a person approves it)` : 'Ask the user to widen the access setting'}, or only read`,
    }
  }
  const word = changeWord(action.change)
  if (action.refusal?.code === 'path_outside_workspace') {
    if (input.level !== 'full-access') return { type: 'refused', ...action.refusal }
    return {
      type: 'ask',
      request: {
        tool: action.tool,
        input: pathInput(action),
        reason: `write outside the workspace: ${action.path}`,
        access: 'full-access',
        summary: `${word} OUTSIDE the workspace (dangerous): ${action.path}`,
        dangerous: true,
      },
      exemption: 'outside',
      deniedCode: 'permission_denied',
    }
  }
  if (action.refusal?.code === 'protected_path') {
    const rule = input.allowedBy
    if (rule === undefined) return { type: 'refused', ...action.refusal }
    if (rule.withoutApproval) return { type: 'allowed', exemption: 'protected' }
    return {
      type: 'ask',
      request: {
        tool: action.tool,
        input: pathInput(action),
        reason: `${word} the protected path ${action.path} (allowed by the rule ${rule.source})`,
        access: input.level,
        summary: `${word} protected ${action.path}`,
        dangerous: false,
      },
      exemption: 'protected',
      deniedCode: 'protected_path',
    }
  }
  if (input.approval === 'untrusted' && input.allowedBy === undefined) {
    return {
      type: 'ask',
      request: {
        tool: action.tool,
        input: pathInput(action),
        reason: `${word} ${action.path} (the approval policy is untrusted)`,
        access: input.level,
        summary: `${word} ${action.path}`,
        dangerous: false,
        rule: `write_file(${action.path})`,
      },
      deniedCode: 'permission_denied',
    }
  }
  return { type: 'allowed' }
}

function pathInput(action: Omit<PathAction, 'signal'>): { path: string; change?: PathChange } {
  return action.change === undefined || action.change === 'write-file'
    ? { path: action.path }
    : { path: action.path, change: action.change }
}

/** The verb of a path change, as a person reads it in a prompt. */
function changeWord(change: PathChange | undefined): string {
  switch (change ?? 'write-file') {
    case 'write-file':
      return 'write'
    case 'make-folder':
      return 'create the folder'
    case 'remove':
      return 'remove'
    case 'create-symlink':
      return 'create the link'
  }
}
