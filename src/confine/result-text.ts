/**
 * @module confine/result-text
 * A confined call's answer as text: a string as is, nothing as empty, anything else as compact
 * JSON, falling back to what it printed; then cut to the byte budget with a visible marker.
 */
import { inspect } from 'node:util'

/** The body of a result: its value as text, or the printed output when that is empty. */
export function resultBody(result: unknown, stdout: string): string {
  const body = valueText(result)
  return body === '' && stdout !== '' ? stdout : body
}

/** What {@link capBytes} answers. */
export interface CappedText {
  readonly text: string
  /** The UTF-8 size of the text before it was cut. */
  readonly bytes: number
  readonly truncated: boolean
}

/**
 * Keeps the first `maxBytes` bytes of `text` (never splitting a character) and appends
 * ` ...[truncated to N bytes]` when anything was cut.
 *
 * @example
 * capBytes('abcdef', 3).text // 'abc ...[truncated to 3 bytes]'
 */
export function capBytes(text: string, maxBytes: number): CappedText {
  const encoded = Buffer.from(text, 'utf8')
  if (encoded.length <= maxBytes) return { text, bytes: encoded.length, truncated: false }
  let end = maxBytes
  // Step back off UTF-8 continuation bytes (10xxxxxx) to the start of a character.
  while (end > 0 && ((encoded[end] ?? 0) & 0xc0) === 0x80) end--
  return {
    text: `${encoded.subarray(0, end).toString('utf8')} ...[truncated to ${maxBytes} bytes]`,
    bytes: encoded.length,
    truncated: true,
  }
}

/**
 * The most bytes an envelope may take for a result cut to `maxBytes`: JSON escapes can grow a
 * string several times, and whatever is over the budget is cut afterwards anyway.
 */
export function envelopeLimit(maxBytes: number): number {
  return 8 * maxBytes + 64 * 1024
}

function valueText(value: unknown): string {
  if (typeof value === 'string') return value
  if (value === null || value === undefined) return ''
  try {
    const json = JSON.stringify(value) as string | undefined
    if (json !== undefined) return json
  } catch {
    // Not JSON (a cycle, a BigInt): printed instead.
  }
  return inspect(value, { breakLength: Infinity })
}
