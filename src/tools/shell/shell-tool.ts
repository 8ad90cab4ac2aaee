/**
 * @module tools/shell/shell-tool
 * `shell`: a bash command in the jail, at /workspace. The command policy and the access in
 * force decide whether it runs (asking a person when they say so); the jail decides what it
 * can reach. Only a person's approval at full access runs a command outside the jail.
 */
import { z } from 'zod'
import { EitriError } from '../../errors/eitri-error.ts'
import type { AccessContext, CommandAuthorization } from '../../ports/access-context.ts'
import { defineTool } from '../../tool/define-tool.ts'
import { availablePrograms, type ProgramSession } from '../../ports/program-session.ts'
import type { ToolContext } from '../../tool/tool-context.ts'
import { toolError, toolSuccess } from '../../tool/tool-result.ts'
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
  description: `Run a bash command in a sandbox (bubblewrap jail) at /workspace, the workspace root: no network, no access outside the workspace, git works. Answers the exit code, stdout and stderr. Default timeout ${DEFAULT_SHELL_TIMEOUT_S} s. For servers and watchers use background: true, then shell_output and shell_kill. Only if a step truly cannot work in the sandbox, pass escalate with a reason: a person decides whether it runs outside (full access, dangerous).`,
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
    escalate: z
      .object({
        reason: z
          .string()
          .min(1)
          .describe('Why the sandbox is not enough, for the person who decides.'),
      })
      .optional()
      .describe(
        'Ask a person to run this command outside the sandbox (full access). Refused under a cap such as plan mode.',
      ),
  }),
  // Any command may write, and a background job goes on writing after the call answers.
  changes: 'current-line',
  availability: shellAvailability,
  async execute(
    { command, timeout_s: timeoutSeconds = DEFAULT_SHELL_TIMEOUT_S, background = false, escalate },
    ctx,
  ) {
    if (background && escalate !== undefined) {
      throw new EitriError(
        'invalid_input',
        'background and escalate cannot go together: background jobs always run in the jail. Run it in the foreground with escalate, or in the background without it.',
      )
    }
    // The jail's probe (once per jail) runs while the command is judged, not after: it runs an
    // empty command on an empty folder, so probing for a command then refused changes nothing.
    if (escalate === undefined) ctx.programs?.availability().catch(() => undefined)
    const authorization = await authorize(ctx, command, escalate)
    if (authorization.type === 'refused') {
      return toolError(
        'permission_denied',
        `permit denied: ${authorization.reason} (exit ${EXIT_DENIED})`,
        {
          exitCode: EXIT_DENIED,
          rule: authorization.rule,
          ...(authorization.needsApproval ? { needsApproval: true } : {}),
        },
      )
    }
    const programs = authorization.confined ? await programsOf(ctx) : unconfinedPrograms(ctx)
    const access = ctx.access?.level === 'read-only' ? 'read-only' : 'workspace-write'
    const argv = ['/bin/bash', '-c', command]
    if (background && authorization.confined) {
      const id = await programs.startJob({ command: argv, access, label: command })
      return toolSuccess(
        `Started ${id}: ${command}\nRead its output with shell_output {"id":"${id}"}; end it with shell_kill {"id":"${id}"}.`,
        {
          id,
          background: true,
        },
      )
    }
    const request = { command: argv, timeoutMs: timeoutSeconds * 1000, signal: ctx.signal }
    const run = authorization.confined
      ? await programs.run({ ...request, access })
      : await programs.runOutsideJail(request)
    if (run.cancelled)
      return toolError('cancelled', `Command cancelled: ${command}`, { exitCode: null })
    const outside = authorization.confined
      ? {}
      : { confined: false, dangerous: true, approvedBy: authorization.approvedBy }
    const content = `${authorization.confined ? '' : `[ran OUTSIDE the jail in your folder (main) with full access, approved by ${authorization.approvedBy}]\n\n`}${formatRun(run, { confined: authorization.confined })}`
    if (run.timedOut) {
      return toolError(
        'timeout',
        `${content}\n\n${timeoutNote(timeoutSeconds, authorization.confined)} (exit ${EXIT_TIMEOUT})`,
        {
          exitCode: EXIT_TIMEOUT,
          timedOut: true,
          truncated: run.truncated,
          ...outside,
        },
      )
    }
    return toolSuccess(content, {
      exitCode: run.exitCode,
      timedOut: false,
      truncated: run.truncated,
      durationMs: Math.round(run.durationMs),
      ...outside,
    })
  },
})

/**
 * What a timeout means and how to go on: a model that only hears "timed out" tends to run the
 * same command again with the same deadline.
 */
function timeoutNote(timeoutSeconds: number, confined: boolean): string {
  const longer =
    timeoutSeconds < MAX_SHELL_TIMEOUT_S
      ? `run it again with a longer timeout_s (up to ${MAX_SHELL_TIMEOUT_S})`
      : undefined
  const background = confined
    ? 'start it with background: true and read its output with shell_output while it runs'
    : undefined
  const ways = [longer, background].filter((way) => way !== undefined)
  return `[timed out after ${timeoutSeconds} s and stopped with everything it started; what it printed until then is above.${ways.length === 0 ? '' : ` To let it finish: ${ways.join(', or ')}.`}]`
}

/**
 * Under a cap (plan mode, a parent's), the shell trio is offered only while the jail can run:
 * what keeps a capped session read-only is the jail's read-only mount.
 */
export async function shellAvailability(ctx: ToolContext): Promise<string | undefined> {
  if (ctx.access?.capped !== true || ctx.programs === undefined) return undefined
  const availability = await ctx.programs.availability()
  if (availability.available) return undefined
  const where = ctx.access.mode === 'default' ? 'this session' : `${ctx.access.mode} mode`
  return `tool "shell" is not available in ${where}: its ${ctx.access.level} cap needs the jail, which is unavailable: ${availability.reason}`
}

/** The session's programs, if the jail can run them; otherwise a `jail_unavailable` error. */
export function programsOf(ctx: ToolContext): Promise<ProgramSession> {
  return availablePrograms(ctx.programs, 'The shell')
}

function unconfinedPrograms(ctx: ToolContext): ProgramSession {
  if (ctx.programs === undefined)
    throw new EitriError('jail_unavailable', 'This session cannot run programs.')
  return ctx.programs
}

/** Without an access context (a bare library call), every command runs confined. */
async function authorize(
  ctx: ToolContext,
  command: string,
  escalate: { reason: string } | undefined,
): Promise<CommandAuthorization> {
  const access: AccessContext | undefined = ctx.access
  if (access === undefined) {
    return escalate === undefined
      ? { type: 'run', confined: true }
      : {
          type: 'refused',
          rule: 'no-approver',
          reason: 'escalation needs a person, and this session has no access policy',
          needsApproval: true,
        }
  }
  return access.authorizeCommand({
    command,
    ...(escalate === undefined ? {} : { escalate }),
    signal: ctx.signal,
  })
}
