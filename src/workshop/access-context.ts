/**
 * @module workshop/access-context
 * The access in force for a workshop's calls. Until modes and approvals arrive, the level is
 * `workspace-write` and the command policy judges every shell command. The policy's parser is
 * loaded at the first command, so sessions that never run one never pay for it.
 */
import { CommandPolicy } from '../access/command-policy/command-policy.ts'
import type { AccessContext } from '../tool/access-context.ts'

/** An access context and what to close with it. */
export interface WorkshopAccess extends AsyncDisposable {
  readonly access: AccessContext
  readonly close: () => Promise<void>
}

/** Builds the workshop's access context. */
export function createAccessContext(): WorkshopAccess {
  let policy: Promise<CommandPolicy> | undefined
  const close = async (): Promise<void> => {
    const loaded = policy
    policy = undefined
    if (loaded !== undefined) (await loaded.catch(() => undefined))?.close()
  }
  return {
    access: {
      level: 'workspace-write',
      judgeCommand: async (command, options = {}) => {
        policy ??= CommandPolicy.load()
        return (await policy).judge(command, options)
      },
    },
    close,
    [Symbol.asyncDispose]: close,
  }
}
