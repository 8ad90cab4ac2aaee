/**
 * @module workshop/command-judge
 * The command policy of a workshop, shared by its sessions. Its modules and parser are loaded
 * at the first command, so sessions that never run one (and `eitri exec`, which runs its command
 * as the person's) never pay for them.
 */
import type { CommandPolicy } from '../access/command-policy/command-policy.ts'
import type { CommandJudgement } from '../ports/access-context.ts'

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
      policy ??= import('../access/command-policy/command-policy.ts').then((loaded) =>
        loaded.CommandPolicy.load(),
      )
      return (await policy).judge(command, options)
    },
    close: async () => {
      const loaded = policy
      policy = undefined
      if (loaded !== undefined) (await loaded.catch(() => undefined))?.close()
    },
  }
}
