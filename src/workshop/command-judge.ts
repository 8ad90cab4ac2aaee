/**
 * @module workshop/command-judge
 * The command policy of a workshop, shared by its sessions. Its parser is loaded at the first
 * command, so sessions that never run one never pay for it.
 */
import { CommandPolicy } from '../access/command-policy/command-policy.ts'
import type { CommandJudgement } from '../tool/access-context.ts'

/** Judges commands; `close` frees the parser. */
export interface CommandJudge {
  readonly judge: (command: string, options: { escalate?: boolean }) => Promise<CommandJudgement>
  readonly close: () => Promise<void>
}

/** A lazily loaded command policy. */
export function lazyCommandJudge(): CommandJudge {
  let policy: Promise<CommandPolicy> | undefined
  return {
    judge: async (command, options) => {
      policy ??= CommandPolicy.load()
      return (await policy).judge(command, options)
    },
    close: async () => {
      const loaded = policy
      policy = undefined
      if (loaded !== undefined) (await loaded.catch(() => undefined))?.close()
    },
  }
}
