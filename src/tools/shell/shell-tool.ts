/**
 * @module tools/shell/shell-tool
 * `shell`: a bash command in the jail, at /workspace. The command policy decides whether it
 * runs; the jail decides what it can reach.
 */
import { z } from 'zod'
import { EitriError } from '../../errors/eitri-error.ts'
import { defineTool } from '../../tool/define-tool.ts'
import type { ToolContext } from '../../tool/tool-context.ts'
import { toolError, toolSuccess } from '../../tool/tool-result.ts'
import type { ProgramSession } from '../../tool/program-session.ts'
import { formatRun } from './format-run.ts'

/** Default and longest wall-clock limits of a foreground command. */
export const DEFAULT_SHELL_TIMEOUT_S = 60
export const MAX_SHELL_TIMEOUT_S = 600
/** Exit codes the shell reports for refusals and timeouts, as shells do. */
export const EXIT_DENIED = 126
export const EXIT_TIMEOUT = 124

/** Runs a command in the jail. */
export const shellTool = defineTool({
  name: 'shell',
  description: `Run a bash command in a sandbox (bubblewrap jail) at /workspace, the workspace root: no network, no access outside the workspace, git works. Answers the exit code, stdout and stderr. Default timeout ${DEFAULT_SHELL_TIMEOUT_S} s. For servers and watchers use background: true, then shell_output and shell_kill.`,
  parameters: z.object({
    command: z.string().min(1).describe('The bash command line.'),
    timeout_s: z
      .number()
      .positive()
      .max(MAX_SHELL_TIMEOUT_S)
      .optional()
      .describe(`Seconds before the command is stopped. Default ${DEFAULT_SHELL_TIMEOUT_S}.`),
    background: z
      .boolean()
      .optional()
      .describe('Start it in the background and return its job id at once.'),
  }),
  async execute(
    { command, timeout_s: timeoutSeconds = DEFAULT_SHELL_TIMEOUT_S, background = false },
    ctx,
  ) {
    const refusal = await judge(ctx, command)
    if (refusal !== undefined) return refusal
    const programs = await programsOf(ctx)
    const access = ctx.access?.level === 'read-only' ? 'read-only' : 'workspace-write'
    const argv = ['/bin/bash', '-c', command]
    if (background) {
      const id = await programs.startJob({ command: argv, access, label: command })
      return toolSuccess(
        `Started ${id}: ${command}\nRead its output with shell_output {"id":"${id}"}; end it with shell_kill {"id":"${id}"}.`,
        { id, background: true },
      )
    }
    const run = await programs.run({
      command: argv,
      access,
      timeoutMs: timeoutSeconds * 1000,
      signal: ctx.signal,
    })
    if (run.cancelled)
      return toolError('cancelled', `Command cancelled: ${command}`, { exitCode: null })
    const content = formatRun(run)
    if (run.timedOut) {
      return toolError(
        'timeout',
        `${content}\n\n[timed out after ${timeoutSeconds} s] (exit ${EXIT_TIMEOUT})`,
        {
          exitCode: EXIT_TIMEOUT,
          timedOut: true,
          truncated: run.truncated,
        },
      )
    }
    return toolSuccess(content, {
      exitCode: run.exitCode,
      timedOut: false,
      truncated: run.truncated,
      durationMs: Math.round(run.durationMs),
    })
  },
})

/** The session's programs, if the jail can run them; otherwise a `jail_unavailable` error. */
export async function programsOf(ctx: ToolContext): Promise<ProgramSession> {
  const programs = ctx.programs
  if (programs === undefined) {
    throw new EitriError(
      'jail_unavailable',
      'This session cannot run programs: no jail is attached to it.',
    )
  }
  const availability = await programs.availability()
  if (!availability.available) {
    throw new EitriError(
      'jail_unavailable',
      `The shell needs the jail, which is unavailable, so nothing ran: ${availability.reason}. To fix: ${availability.fix}.`,
    )
  }
  return programs
}

/** Asks the command policy; a refusal becomes the error result, anything that may run undefined. */
async function judge(ctx: ToolContext, command: string) {
  if (ctx.access === undefined) return undefined
  const judgement = await ctx.access.judgeCommand(command)
  if (judgement.verdict === 'deny') {
    return toolError(
      'permission_denied',
      `permit denied: ${judgement.reason} (exit ${EXIT_DENIED})`,
      { exitCode: EXIT_DENIED, rule: judgement.rule },
    )
  }
  if (judgement.verdict === 'ask') {
    return toolError(
      'permission_denied',
      `permit denied: ${judgement.reason}. This command needs a person's approval, and no approver is available in this session (exit ${EXIT_DENIED})`,
      { exitCode: EXIT_DENIED, rule: judgement.rule, needsApproval: true },
    )
  }
  return undefined
}
