/**
 * @module tool/run-tool-call
 * One call through the contract: validate, execute with cancellation, catch, truncate.
 */
import { EitriError } from '../errors/eitri-error.ts'
import type { Tool } from './define-tool.ts'
import type { ToolContext } from './tool-context.ts'
import { toolError, type ToolResult } from './tool-result.ts'
import { truncateResult } from './truncate.ts'
import { describeInvalidInput } from './validate-input.ts'
import { MAIN_LINE } from '../ports/line-control.ts'

/**
 * Runs `tool` on `input`. Bad input answers `invalid_input` naming each field; a thrown
 * `EitriError` answers its own code and message; anything else thrown answers `tool_failed`
 * without a stack trace; an aborted signal answers `cancelled` at once, without waiting for
 * the tool to notice. The content is then truncated to the result budget.
 */
export async function runToolCall(
  tool: Tool,
  input: unknown,
  ctx: ToolContext,
): Promise<ToolResult> {
  if (ctx.signal.aborted)
    return toolError('cancelled', '[cancelled before execution]', { tool: tool.name })
  const parsed = tool.parameters.safeParse(input ?? {})
  if (!parsed.success) {
    return toolError(
      'invalid_input',
      `Invalid input for tool "${tool.name}":\n${describeInvalidInput(tool.parameters, input ?? {}, parsed.error)}\nFix these fields and call again.`,
      {
        tool: tool.name,
        issues: parsed.error.issues.map(({ path, message }) => ({ path, message })),
      },
    )
  }
  // Whatever the tool asks a person about its files is asked, and recorded, in its own name.
  const named = ctx.workspace.forTool?.(tool.name)
  const result = await settle(
    tool,
    parsed.data,
    named === undefined ? ctx : { ...ctx, workspace: named },
  )
  return truncateResult(result)
}

/**
 * The line a call may change when its tool says so and the context takes snapshots; when the
 * tool cannot tell (its input names no line that exists), main, so a snapshot is never missed.
 */
function changedLine(tool: Tool, input: unknown, ctx: ToolContext): string | undefined {
  const changes = tool.changes
  if (changes === undefined || ctx.checkpoints === undefined) return undefined
  if (changes === 'current-line') return ctx.lines?.current ?? MAIN_LINE
  try {
    return changes(input as never, ctx)
  } catch {
    return MAIN_LINE
  }
}

/** Runs the tool, between snapshots of main when it may change it. */
function execute(tool: Tool, input: unknown, ctx: ToolContext): Promise<ToolResult> {
  const line = changedLine(tool, input, ctx)
  const { checkpoints, ...inner } = ctx
  if (line === undefined || checkpoints === undefined) return tool.execute(input as never, ctx)
  // The snapshots around this call cover the calls it makes (js_eval's tools.call).
  return checkpoints.around({ tool: tool.name, input, line }, async () =>
    ctx.signal.aborted
      ? toolError('cancelled', '[cancelled before execution]', { tool: tool.name })
      : tool.execute(input as never, inner),
  )
}

async function settle(tool: Tool, input: unknown, ctx: ToolContext): Promise<ToolResult> {
  const { signal } = ctx
  let onAbort: (() => void) | undefined
  const cancelled = new Promise<ToolResult>((resolve) => {
    onAbort = () =>
      resolve(
        toolError(
          'cancelled',
          `Tool call cancelled: "${tool.name}" was stopped before it finished.`,
          { tool: tool.name },
        ),
      )
    signal.addEventListener('abort', onAbort, { once: true })
  })
  try {
    const running = (async () => execute(tool, input, ctx))().catch((error: unknown) =>
      failure(tool, error, ctx),
    )
    return await Promise.race([running, cancelled])
  } finally {
    if (onAbort !== undefined) signal.removeEventListener('abort', onAbort)
  }
}

function failure(tool: Tool, error: unknown, ctx: ToolContext): ToolResult {
  if (EitriError.isInstance(error)) {
    return toolError(error.code, ctx.workspace.redact(error.message), {
      tool: tool.name,
      ...error.data,
    })
  }
  const message = error instanceof Error ? error.message : String(error)
  return toolError(
    'tool_failed',
    `Tool "${tool.name}" failed: ${ctx.workspace.redact(message)}\nThis is a fault in the tool, not in your input; try another way or report it.`,
    { tool: tool.name },
  )
}
