/**
 * @module errors/input-excerpt
 * What a message quotes of a model's or a person's input: the start of it, bounded, so a 10 MB
 * tool name or field comes back as a short prefix and its length, not whole.
 */

/** The most characters of one input a message quotes. */
export const INPUT_EXCERPT_CHARS = 200

/**
 * `text` itself when it is at most `maxChars` long; otherwise its first `maxChars` characters
 * (never half a surrogate pair), then how long the whole was.
 *
 * @example
 * `Unknown tool: ${inputExcerpt(call.name)}.` // "Unknown tool: xxx…xxx… (10000000 characters in all)."
 */
export function inputExcerpt(text: string, maxChars: number = INPUT_EXCERPT_CHARS): string {
  if (text.length <= maxChars) return text
  const code = text.charCodeAt(maxChars)
  const end = code >= 0xdc00 && code <= 0xdfff ? maxChars - 1 : maxChars
  return `${text.slice(0, end)}… (${text.length} characters in all)`
}
