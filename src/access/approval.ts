/**
 * @module access/approval
 * What policy leaves to a person. An approver decides; its answer is a result, never a throw.
 */
import type { AccessLevel } from '../ports/access-context.ts'

/** When to ask, with Codex's names: the policies, for validation and help. */
export const APPROVAL_POLICIES = Object.freeze(['untrusted', 'on-request', 'never'] as const)

/** One of {@link APPROVAL_POLICIES}. */
export type ApprovalPolicy = (typeof APPROVAL_POLICIES)[number]

/** What a person is asked to approve. */
export interface ApprovalRequest {
  readonly tool: string
  /**
   * What is done, whole: with the tool and the summary, the key "approved for the session"
   * covers. A request that acts on state (a fork's head, the content it writes) names it here,
   * or a later request with other content would pass for the one the person approved.
   */
  readonly input: unknown
  /** Why it needs a person, in words a person reads in a prompt. */
  readonly reason: string
  /** The access the action needs. */
  readonly access: AccessLevel
  /** One line a prompt can show, such as the command or the path. */
  readonly summary: string
  /** True for actions outside the jail or the workspace. */
  readonly dangerous: boolean
  /** The configuration rule that would allow this without asking, when one can. */
  readonly rule?: string
  /**
   * What "approve for this session" covers, when less than the same action for the rest of the
   * session (a command outside the jail: only while main's files stay as they are); a prompt
   * shows it beside the choices.
   */
  readonly sessionScope?: string
}

/**
 * A person's answer. `approved-for-session` also covers the exact same action later;
 * `unavailable` says no person could be asked at all (no terminal, a client that cannot show
 * prompts): nobody refused, and the action waits for someone who can be asked.
 */
export type ApprovalDecision =
  | { readonly type: 'approved'; readonly by?: string }
  | { readonly type: 'approved-for-session'; readonly by?: string }
  | { readonly type: 'denied'; readonly reason?: string; readonly by?: string }
  | { readonly type: 'unavailable'; readonly reason: string; readonly by?: string }

/** Decides approval requests. */
export type Approver = (
  request: ApprovalRequest,
  options: { signal: AbortSignal },
) => Promise<ApprovalDecision>

/** An approver that asks no one: used where no person can be reached. */
export const nobodyToAsk: Approver = async () => ({
  type: 'unavailable',
  reason: 'no person can be asked in this session',
  by: 'eitri',
})
