/**
 * @module eval/capabilities/shell-capability
 * `shell`: a bash command in the jail, judged first by the command policy, exactly as the
 * `shell` tool runs it. A refused command throws `permission_denied` with the policy's reason.
 */
import { z } from 'zod'
import { networkNote } from '../../bubblewrap/network-note.ts'
import { EitriError } from '../../errors/eitri-error.ts'
import { availablePrograms } from '../../ports/program-session.ts'
import { capabilityFunction, type Capability } from '../capability.ts'

/** Characters of each stream shell.run keeps. */
export const SHELL_RUN_OUTPUT_CHARS = 30_000

/** Default and longest limits of one command. */
export const DEFAULT_RUN_TIMEOUT_S = 60
export const MAX_RUN_TIMEOUT_S = 600

/** The `shell` capability. */
export const shellCapability: Capability = {
  name: 'shell',
  purpose:
    'Run a bash command in the jail at /workspace (no network, nothing outside the workspace).',
  example: "const { exitCode, stdout } = await shell.run('git log --oneline -5')",
  functions: [
    capabilityFunction({
      name: 'run',
      signature:
        'run(command: string, options?: { timeout_s?: number }): Promise<{ exitCode, stdout, stderr, timedOut, note? }>',
      description: `Runs the command and answers how it ended (default timeout ${DEFAULT_RUN_TIMEOUT_S} s). A command the policy refuses throws. A command that failed for want of the network (the jail has none) has a note saying so and what to do.`,
      parameters: z.tuple([
        z.string().min(1),
        z
          .strictObject({ timeout_s: z.number().positive().max(MAX_RUN_TIMEOUT_S).optional() })
          .optional(),
      ]),
      run: async ([command, options], { ctx, bytes }) => {
        if (ctx.access !== undefined) {
          const judgement = await ctx.access.judgeCommand(command)
          if (judgement.verdict === 'deny' || judgement.verdict === 'ask') {
            throw new EitriError(
              'permission_denied',
              `permit denied: ${judgement.reason}${judgement.verdict === 'ask' ? ". This command needs a person's approval, which an eval cannot ask for: call the shell tool instead" : ''}`,
            )
          }
        }
        const programs = await availablePrograms(ctx.programs, 'shell.run')
        // Two streams, two bytes a character.
        await bytes.reserve(2 * 2 * SHELL_RUN_OUTPUT_CHARS)
        const run = await programs.run({
          command: ['/bin/bash', '-c', command],
          access: ctx.access?.level === 'read-only' ? 'read-only' : 'workspace-write',
          timeoutMs: (options?.timeout_s ?? DEFAULT_RUN_TIMEOUT_S) * 1000,
          maxOutputChars: SHELL_RUN_OUTPUT_CHARS,
          signal: ctx.signal,
        })
        if (run.cancelled) throw new EitriError('cancelled', `Command cancelled: ${command}`)
        // As the shell tool says it (decision 0040): npm's own words never mention the jail.
        const note = networkNote(run)
        return {
          exitCode: run.exitCode,
          stdout: run.stdout,
          stderr: run.stderr,
          timedOut: run.timedOut,
          ...(note === undefined ? {} : { note }),
        }
      },
    }),
  ],
}
