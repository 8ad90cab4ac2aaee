/**
 * @module cli/terminal-approver
 * Approval at the terminal: the person running `eitri` answers a prompt on stderr. Without a
 * terminal, nobody can be asked: the answer is `unavailable`, and the action does not go ahead.
 */
import { createInterface } from 'node:readline/promises'
import os from 'node:os'
import type { ApprovalDecision, Approver } from '../access/approval.ts'

/** An approver prompting on the terminal, or answering `unavailable` when there is none. */
export function terminalApprover(): Approver {
  return async (request, { signal }): Promise<ApprovalDecision> => {
    const by = `${os.userInfo().username} at the terminal`
    if (process.stdin.isTTY !== true) {
      return {
        type: 'unavailable',
        by: 'eitri',
        reason: 'no terminal to ask on: stdin is not a terminal',
      }
    }
    const lines = createInterface({ input: process.stdin, output: process.stderr })
    try {
      const danger = request.dangerous
        ? '\n  DANGEROUS: this runs without eitri’s confinement.'
        : ''
      const scope = request.sessionScope === undefined ? '' : `\n  always: ${request.sessionScope}`
      const answer = await lines.question(
        `\neitri asks your approval (${request.access} access) for ${request.tool}:${danger}\n  ${request.summary}\n  why: ${request.reason}${scope}\nApprove? [y]es, [a]lways this session, [N]o: `,
        { signal },
      )
      const choice = answer.trim().toLowerCase()
      if (choice === 'y' || choice === 'yes') return { type: 'approved', by }
      if (choice === 'a' || choice === 'always') return { type: 'approved-for-session', by }
      return { type: 'denied', by, reason: 'denied at the terminal' }
    } finally {
      lines.close()
    }
  }
}
