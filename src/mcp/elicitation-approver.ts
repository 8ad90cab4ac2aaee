/**
 * @module mcp/elicitation-approver
 * Approval through the MCP client: an elicitation shows the person what is asked and takes
 * their answer. A client that cannot elicit answers `unavailable` (nobody could be asked), naming
 * the rule or flag that would allow the action.
 */
import type { Server } from '@modelcontextprotocol/sdk/server/index.js'
import type { ApprovalDecision, ApprovalRequest, Approver } from '../access/approval.ts'

/** The answers a person can give. */
const CHOICES = ['approve', 'approve-for-session', 'deny'] as const

/** An approver asking the person behind `server()`'s client. */
export function elicitationApprover(server: () => Server | undefined): Approver {
  return async (request, { signal }): Promise<ApprovalDecision> => {
    const connected = server()
    const client = connected?.getClientVersion()?.name ?? 'the MCP client'
    if (connected === undefined || connected.getClientCapabilities()?.elicitation === undefined) {
      return {
        type: 'unavailable',
        by: 'eitri',
        reason: `${client} cannot show approval prompts (it does not support MCP elicitation)${howToAllow(request)}`,
      }
    }
    const result = await connected.elicitInput(
      {
        message: prompt(request),
        requestedSchema: {
          type: 'object',
          properties: {
            decision: {
              type: 'string',
              title: 'Decision',
              enum: [...CHOICES],
              enumNames: ['Approve once', 'Approve for this session', 'Deny'],
              description:
                'Approve once, approve this exact action for the rest of the session, or deny.',
            },
          },
          required: ['decision'],
        },
      },
      { signal },
    )
    const decision = result.action === 'accept' ? result.content?.['decision'] : undefined
    if (decision === 'approve') return { type: 'approved', by: client }
    if (decision === 'approve-for-session') return { type: 'approved-for-session', by: client }
    return {
      type: 'denied',
      by: client,
      reason: result.action === 'accept' ? 'denied' : `the person chose ${result.action}`,
    }
  }
}

function prompt(request: ApprovalRequest): string {
  const danger = request.dangerous ? 'DANGEROUS: this runs without eitri’s confinement.\n' : ''
  const scope =
    request.sessionScope === undefined
      ? ''
      : `\n\nApprove for this session: ${request.sessionScope}`
  return `${danger}eitri asks your approval (${request.access} access) for ${request.tool}:\n${request.summary}\n\nWhy: ${request.reason}${scope}`
}

/** What to do instead; the approval gate adds the allow rule that would cover it, when one would. */
function howToAllow(request: ApprovalRequest): string {
  if (request.rule !== undefined) return ''
  return '; connect with a client that supports elicitation, or run the step yourself'
}
