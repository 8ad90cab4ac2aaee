/**
 * @module access/approval-gate
 * Where a session asks a person: the approval policy decides whether anyone is asked, the
 * approver answers, "approved for the session" covers the exact same action later, and every
 * decision is recorded.
 */
import { digestInput, type ApprovalRecorder } from './approval-log.ts'
import type { ApprovalAnswer } from '../ports/access-context.ts'
import type { ApprovalPolicy, ApprovalRequest, Approver } from './approval.ts'
import { visibleText } from './visible-text.ts'

/** The asking of one session. */
export class ApprovalGate {
  readonly #policy: ApprovalPolicy
  readonly #approver: Approver
  readonly #recorder: ApprovalRecorder | undefined
  /** Exact actions a person approved for the rest of the session. */
  readonly #approvedForSession = new Set<string>()
  /** Who gave the most recent approval, for the record of an unconfined run. */
  lastApprover = 'a person'

  constructor(options: {
    policy: ApprovalPolicy
    approver: Approver
    recorder?: ApprovalRecorder | undefined
  }) {
    this.#policy = options.policy
    this.#approver = options.approver
    this.#recorder = options.recorder
  }

  /** Asks a person unless the policy forbids it; undefined when approved, else why not. */
  async ask(request: ApprovalRequest, signal: AbortSignal): Promise<string | undefined> {
    const answer = await this.decide(request, signal)
    return answer.type === 'approved' ? undefined : answer.reason
  }

  /**
   * Asks a person unless the policy forbids it: approved, refused (by the person or the
   * policy), or unavailable when no person could be asked (the policy is never, no terminal, a
   * client that cannot show prompts).
   */
  async decide(asked: ApprovalRequest, signal: AbortSignal): Promise<ApprovalAnswer> {
    // The exact action is what the person was shown as well as the input: a door whose input
    // leaves out what it acts on (a fork's head, a file's content) must put it in, and two
    // requests shown differently are never one action.
    const key = `${asked.tool}\u0000${JSON.stringify(asked.input)}\u0000${asked.summary}`
    // What every approver shows and the log keeps: a control character in a command (an escape
    // that clears the line) must not hide from the person what runs.
    const request = {
      ...asked,
      summary: visibleText(asked.summary),
      reason: visibleText(asked.reason),
    }
    if (this.#approvedForSession.has(key)) return { type: 'approved' }
    if (this.#policy === 'never') {
      const hint =
        request.rule === undefined
          ? ''
          : `, or allow it with the rule ${request.rule} in eitri's configuration`
      await this.#record(request, 'denied', 'policy', 'the approval policy is never')
      return {
        type: 'unavailable',
        reason: `it needs a person's approval and the approval policy is never: nobody is asked. Start the session with --approval on-request${hint}`,
      }
    }
    const decision = await this.#approver(request, { signal }).catch((error: unknown) => ({
      type: 'denied' as const,
      reason: `the approver failed: ${(error as Error).message}`,
      by: 'eitri',
    }))
    const by = decision.by ?? 'approver'
    // The log knows approved and denied: nobody asked is recorded as denied, with why.
    await this.#record(
      request,
      decision.type === 'unavailable' ? 'denied' : decision.type,
      by,
      decision.type === 'denied' || decision.type === 'unavailable' ? decision.reason : undefined,
    )
    const hint =
      request.rule === undefined
        ? ''
        : ` To allow it without asking, add the rule ${request.rule} to rules.allow in eitri's configuration.`
    if (decision.type === 'unavailable')
      return {
        type: 'unavailable',
        reason: `no person could be asked (${decision.reason}).${hint}`,
      }
    if (decision.type === 'denied')
      return {
        type: 'refused',
        reason: `a person did not approve it (${decision.reason ?? 'denied'}).${hint}`,
      }
    if (decision.type === 'approved-for-session') this.#approvedForSession.add(key)
    this.lastApprover = by
    return { type: 'approved' }
  }

  async #record(
    request: ApprovalRequest,
    decision: 'approved' | 'approved-for-session' | 'denied',
    by: string,
    reason?: string,
  ): Promise<void> {
    await this.#recorder?.record({
      time: new Date().toISOString(),
      tool: request.tool,
      inputDigest: digestInput(request.input),
      summary: request.summary,
      decision,
      by,
      ...(reason === undefined ? {} : { reason }),
      access: request.access,
      dangerous: request.dangerous,
    })
  }
}
