/**
 * @module cli/run-activity
 * What a model Run has done so far, read from its journal as it grows: its model steps, the
 * tools it called, and the tokens and dollars spent. `eitri run` shows it live: a line per
 * step and tool call in a log, the totals beside the Run on a terminal.
 */
import type { RunEvent } from '../store/run-record.ts'

/** A Run's model usage so far. */
export interface RunActivity {
  steps: number
  inputTokens: number
  outputTokens: number
  dollars: number
  /** What it is doing now, such as `calling write_file`; empty when nothing is in flight. */
  doing: string
}

/** No activity yet. */
export function emptyActivity(): RunActivity {
  return { steps: 0, inputTokens: 0, outputTokens: 0, dollars: 0, doing: '' }
}

/** The longest tool input shown, in characters: a file's whole content would drown the view. */
const MAX_INPUT_SHOWN = 80

/**
 * Folds `event` into `activity`; answers the line to log for it, or undefined for an event
 * not worth a line.
 */
export function foldEvent(activity: RunActivity, event: RunEvent): string | undefined {
  const data = record(event.data)
  switch (event.type) {
    case 'model-call-intent':
      activity.doing = `model step ${number(data['step']) + 1}`
      return undefined
    case 'model-call-result': {
      activity.doing = ''
      if (typeof data['error'] === 'string') return `model step failed: ${data['error']}`
      activity.steps += 1
      activity.inputTokens += number(data['inputTokens'])
      activity.outputTokens += number(data['outputTokens'])
      activity.dollars += number(data['dollars'])
      const calls = number(data['toolCalls'])
      return `step ${number(data['step']) + 1}: ${number(data['inputTokens'])} in + ${number(data['outputTokens'])} out tokens, ${dollarsText(number(data['dollars']))}${calls === 0 ? ', answered' : `, ${calls} tool call${calls === 1 ? '' : 's'}`} (so far: ${totalsText(activity)})`
    }
    case 'tool-call-intent': {
      const name = typeof data['name'] === 'string' ? data['name'] : 'a tool'
      activity.doing = `calling ${name}`
      return `tool ${name} ${inputText(data['input'])}`
    }
    case 'tool-call-result':
      activity.doing = ''
      return `tool ${toolResultText(data)}`
    case 'compaction':
    case 'compaction-result':
      return typeof data['error'] === 'string'
        ? `compaction failed: ${data['error']}`
        : 'compacted the conversation'
    default:
      return undefined
  }
}

/**
 * A tool call's result from its journal event: `shell → failed (exit 1)`, `write_file → success`,
 * `shell → error timeout (exit 124)`. A command that exits non-zero is `failed` though the tool
 * call itself succeeded: that is what a person watching needs to see.
 */
export function toolResultText(data: Readonly<Record<string, unknown>>): string {
  const name = typeof data['name'] === 'string' ? data['name'] : 'a tool'
  const type = typeof data['type'] === 'string' ? data['type'] : 'done'
  const code = typeof data['code'] === 'string' ? ` ${data['code']}` : ''
  const exitCode = data['exitCode']
  const exit =
    typeof exitCode === 'number' ? ` (exit ${exitCode})` : exitCode === null ? ' (killed)' : ''
  const status =
    type === 'success' && typeof exitCode === 'number' && exitCode !== 0 ? 'failed' : type
  return `${name} → ${status}${code}${exit}`
}

/** `N steps, T tokens, $D`. */
export function totalsText(activity: RunActivity): string {
  return `${activity.steps} step${activity.steps === 1 ? '' : 's'}, ${activity.inputTokens + activity.outputTokens} tokens, ${dollarsText(activity.dollars)}`
}

/** Dollars to six places, trailing zeros dropped: `$0.000123`. */
export function dollarsText(dollars: number): string {
  return `$${Number(dollars.toFixed(6)).toString()}`
}

function inputText(input: unknown): string {
  const text = JSON.stringify(input ?? null)
  return text.length <= MAX_INPUT_SHOWN ? text : `${text.slice(0, MAX_INPUT_SHOWN - 1)}…`
}

function record(value: unknown): Record<string, unknown> {
  return typeof value === 'object' && value !== null ? (value as Record<string, unknown>) : {}
}

function number(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) ? value : 0
}
