/**
 * @module workshop/access-context
 * The access in force for a workshop's calls. Until modes and approvals arrive, the level is
 * `workspace-write`, and the command policy judges every shell command.
 */
import type { AccessContext } from '../tool/access-context.ts'

/** The access context of a workshop. */
export async function createAccessContext(): Promise<AccessContext> {
  return {
    level: 'workspace-write',
    judgeCommand: async () => ({ verdict: 'jail', rule: 'default', reason: 'runs confined' }),
  }
}
