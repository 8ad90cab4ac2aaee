/**
 * Test support: a workshop on a scratch project whose approver says yes to everything, with a
 * fork NAME made by the person and a session working in it, as an agent's would.
 */
import assert from 'node:assert/strict'
import type { ApprovalDecision } from '../../src/access/approval.ts'
import type { ToolResult } from '../../src/tool/tool-result.ts'
import { openWorkshop } from '../../src/workshop/workshop.ts'
import type { Scratch } from './scratch.ts'

/** An approver that approves every question. */
export const approveAll = async (): Promise<ApprovalDecision> => ({
  type: 'approved',
  by: 'tester',
})

/** The workshop, and a caller of its tools in a session that uses fork `name`; closes both. */
export async function sessionInFork(scratch: Scratch, name: string) {
  const workshop = await openWorkshop({
    workspace: scratch.workspace,
    stateDir: scratch.stateDir,
    configPath: scratch.configPath,
    approver: approveAll,
  })
  const fork = await workshop.call('workspace_fork', { name })
  assert.equal(fork.type, 'success', fork.content)
  const session = await workshop.openSession({ approver: approveAll })
  const call = (tool: string, input: unknown): Promise<ToolResult> =>
    workshop.toolset.run({ name: tool, input }, session.context())
  const used = await call('workspace_use', { fork: name })
  assert.equal(used.type, 'success', used.content)
  return {
    workshop,
    call,
    [Symbol.asyncDispose]: async () => {
      await session.close()
      await workshop.close()
    },
  }
}
