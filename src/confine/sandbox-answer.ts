/**
 * @module confine/sandbox-answer
 * Turns an executor's report into the tool's result: a write outside the permitted paths
 * first, then cancellation, timeout and failure, else the result's text within its byte
 * budget. Every answer carries `metadata.sandbox`.
 */
import type { ErrorCode } from '../errors/eitri-error.ts'
import type { ToolContext } from '../tool/tool-context.ts'
import { toolError, toolSuccess, type ToolResult } from '../tool/tool-result.ts'
import type { SandboxMode } from '../tool/tool-governance.ts'
import { allowedRoots, findViolations } from './allowed-roots.ts'
import type { ConfineSettings } from './confine-options.ts'
import type { ExecutorReport, ExecutorStatus } from './executors/executor.ts'
import { capBytes, resultBody } from './result-text.ts'
import { failureMessage, timeoutMessage, violationMessage } from './sandbox-messages.ts'

/** What `metadata.sandbox` holds on every result of a confined tool. */
export interface SandboxMetadata {
  readonly mode: SandboxMode
  readonly durationMs: number
  /** The UTF-8 size of the content before it was cut to `maxBytes`. */
  readonly bytes: number
  /** Input strings naming existing regular files → sha256. */
  readonly inputHashes: Readonly<Record<string, string>>
  /** Files the executor found written → sha256 (relative paths are in the scratch folder). */
  readonly outputHashes: Readonly<Record<string, string>>
  readonly status: ExecutorStatus
  /** Written paths outside the permitted ones; empty when none. */
  readonly violations: readonly string[]
}

/** What {@link sandboxAnswer} needs. */
export interface SandboxAnswerInput {
  readonly name: string
  readonly settings: ConfineSettings
  readonly report: ExecutorReport & { readonly code?: ErrorCode }
  readonly workdir: string
  readonly inputHashes: Readonly<Record<string, string>>
  readonly durationMs: number
  readonly ctx: ToolContext
}

/** The result of one confined call. */
export function sandboxAnswer(input: SandboxAnswerInput): ToolResult {
  const { name, settings, report, ctx } = input
  const violations = findViolations(
    Object.keys(report.files),
    allowedRoots(settings.mode, input.workdir, settings.allowPaths),
    input.workdir,
  )
  const metadata = (content: string): { sandbox: SandboxMetadata } => ({
    sandbox: {
      mode: settings.mode,
      durationMs: Math.round(input.durationMs),
      bytes: Buffer.byteLength(content, 'utf8'),
      inputHashes: input.inputHashes,
      outputHashes: { ...report.files },
      status: report.status,
      violations,
    },
  })
  const failed = (code: ErrorCode, content: string, extra: Record<string, unknown> = {}) =>
    toolError(code, content, { ...metadata(content), ...extra })
  if (violations.length > 0) {
    return failed(
      'sandbox_violation',
      ctx.workspace.redact(violationMessage(name, violations, settings.mode, settings.allowPaths)),
      { paths: violations, allowPaths: settings.allowPaths },
    )
  }
  if (ctx.signal.aborted) {
    return failed('cancelled', `Tool call cancelled: "${name}" was stopped before it finished.`)
  }
  if (report.status === 'timeout')
    return failed('timeout', timeoutMessage(name, settings.timeoutMs))
  if (report.status === 'error') {
    return failed(
      report.code ?? 'tool_failed',
      ctx.workspace.redact(failureMessage(name, report.error)),
    )
  }
  const body = resultBody(report.result, report.stdout)
  const capped = capBytes(body, settings.maxBytes)
  return toolSuccess(capped.text, {
    sandbox: { ...metadata(body).sandbox, bytes: capped.bytes },
  })
}
