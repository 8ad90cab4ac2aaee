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
  /** Starts loading the policy now, in the background (a server expecting commands). */
  readonly prepare: () => void
  readonly close: () => Promise<void>
}

/** A lazily loaded command policy. */
export function lazyCommandJudge(): CommandJudge {
  let policy: Promise<CommandPolicy> | undefined
  const load = (): Promise<CommandPolicy> =>
    (policy ??= import('../access/command-policy/command-policy.ts').then((loaded) =>
      loaded.CommandPolicy.load(),
    ))
  return {
    judge: async (command, options) => (await load()).judge(command, options),
    // A failure to load is met, and reported, by the first judgement.
    // The first judgement runs the policy's code for the first time: a plain one does that now.
    prepare: () =>
      void load()
        .then((loaded) => loaded.judge('true', {}))
        .catch(() => undefined),
    close: async () => {
      const loaded = policy
      policy = undefined
      if (loaded !== undefined) (await loaded.catch(() => undefined))?.close()
    },
  }
}
