/**
 * @module cli/run-trace-text
 * A model Run's trace as `eitri runs show` prints it: its metrics (model, steps, tokens,
 * dollars, per step) and every message of its chat (system, user, assistant text and tool
 * calls, tool results, compaction summaries), in order.
 */
import type { ChatMessageRecord, RunMetrics } from '../store/run-trace.ts'
import { dollarsText, toolResultText } from './run-activity.ts'

/** The longest text shown of one part; the whole trace is in `eitri runs show --json`. */
const MAX_PART_CHARS = 2_000

/** The metrics' lines: totals, then one per step. */
export function metricsText(metrics: RunMetrics): string {
  const lines = [
    `Model: ${metrics.provider}:${metrics.model}  (inputs ${metrics.inputsId})`,
    `Usage: ${metrics.modelSteps} step${metrics.modelSteps === 1 ? '' : 's'}, ${metrics.inputTokens} input tokens (${metrics.cachedInputTokens} cached), ${metrics.outputTokens} output tokens, ${dollarsText(metrics.dollars)}`,
  ]
  for (const step of metrics.steps) {
    const tools = step.toolCalls.length === 0 ? '' : `, called ${step.toolCalls.join(', ')}`
    lines.push(
      `  step ${step.step + 1}: ${step.inputTokens} in + ${step.outputTokens} out tokens, ${dollarsText(step.dollars)}, ${step.finishReason}${tools}`,
    )
  }
  return `${lines.join('\n')}\n`
}

/**
 * One journal event as `eitri runs show` prints it: its type, a tool result's status (a command
 * that exited non-zero shows `failed (exit 1)`), and its data as JSON with every dollar figure
 * rounded to the micro-dollar, so sums of floating-point prices do not print as
 * 0.0018463000000000002 (`--json` keeps the stored values exactly).
 */
export function eventText(type: string, data: unknown): string {
  if (data === null || data === undefined) return type
  const status =
    type === 'tool-call-result' && typeof data === 'object'
      ? ` ${toolResultText(data as Record<string, unknown>)}`
      : ''
  const shown = JSON.stringify(data, (key, value: unknown) =>
    typeof value === 'number' && /dollars$/i.test(key) ? microDollarsRounded(value) : value,
  )
  return `${type}${status} ${shown}`
}

/** `dollars` to the nearest micro-dollar. */
function microDollarsRounded(dollars: number): number {
  return Math.round(dollars * 1_000_000) / 1_000_000
}

/** The chat's lines: each message under its role, each part of it indented. */
export function chatText(messages: readonly ChatMessageRecord[]): string {
  const out: string[] = []
  for (const message of messages) {
    out.push(`[${message.sequence}] ${message.role}`)
    for (const part of partsOf(message.content)) out.push(indent(part))
  }
  return `${out.join('\n')}\n`
}

function partsOf(content: unknown): string[] {
  if (typeof content === 'string') return [clip(content)]
  if (!Array.isArray(content)) return [clip(JSON.stringify(content))]
  return content.map((part: unknown) => {
    const entry = typeof part === 'object' && part !== null ? (part as Record<string, unknown>) : {}
    switch (entry['type']) {
      case 'text':
      case 'reasoning':
        return clip(
          `${entry['type'] === 'reasoning' ? '(reasoning) ' : ''}${String(entry['text'])}`,
        )
      case 'tool-call':
        return clip(`→ ${String(entry['toolName'])} ${JSON.stringify(entry['input'] ?? null)}`)
      case 'tool-result':
        return clip(`← ${String(entry['toolName'])}: ${outputText(entry['output'])}`)
      default:
        return clip(JSON.stringify(part))
    }
  })
}

function outputText(output: unknown): string {
  if (typeof output === 'object' && output !== null && 'value' in output) {
    const { type, value } = output as { type?: unknown; value: unknown }
    const text = typeof value === 'string' ? value : JSON.stringify(value)
    return type === 'error-text' || type === 'error-json' ? `(error) ${text}` : text
  }
  return JSON.stringify(output)
}

function clip(text: string): string {
  return text.length <= MAX_PART_CHARS
    ? text
    : `${text.slice(0, MAX_PART_CHARS)}… (${text.length - MAX_PART_CHARS} more characters; --json shows all)`
}

function indent(text: string): string {
  return text
    .split('\n')
    .map((line) => (line === '' ? '' : `    ${line}`))
    .join('\n')
}
