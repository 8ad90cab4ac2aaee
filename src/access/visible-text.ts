/**
 * @module access/visible-text
 * Text a person reads before deciding (an approval's summary and reason, and everything the
 * CLI prints for a person: see cli/cli-io.ts `visibleIo`), with every character
 * that changes how the rest is shown written as an escape instead: terminal controls (escape
 * sequences that clear a line or move the cursor, a carriage return that overwrites it),
 * C1 controls, and the invisible or direction-changing characters of Unicode. Raw, they let a
 * command show a person something other than what runs: `rm -rf src; echo '\e[2K\r…'` reads
 * as the harmless command after the escapes.
 */

/**
 * True for a character that a terminal or a client's text view does not show as itself: C0
 * controls but the line feed and tab, DEL, C1 controls, zero-width and direction marks,
 * direction embeddings, overrides and isolates, line and paragraph separators, and the
 * byte-order mark.
 */
function isHidden(code: number): boolean {
  if (code < 0x20) return code !== 0x0a && code !== 0x09
  if (code >= 0x7f && code <= 0x9f) return true
  if (code === 0x061c || code === 0xfeff) return true
  return (
    (code >= 0x200b && code <= 0x200f) ||
    (code >= 0x2028 && code <= 0x202e) ||
    (code >= 0x2060 && code <= 0x2069)
  )
}

/** The usual short escapes, as a person would type them in bash's `$'…'`. */
const SHORT: Readonly<Record<string, string>> = { '\r': '\\r', '\u001b': '\\x1b' }

/**
 * `text` with each hidden character written as an escape (`\x1b`, `\r`, `\u202e`); line feeds
 * and tabs stay.
 *
 * @example
 * visibleText("ls\r\u001b[2Kgit status") // 'ls\\r\\x1b[2Kgit status'
 */
export function visibleText(text: string): string {
  let shown = ''
  for (const character of text) {
    const code = character.codePointAt(0) ?? 0
    if (!isHidden(code)) shown += character
    else
      shown +=
        SHORT[character] ??
        (code <= 0xff
          ? `\\x${code.toString(16).padStart(2, '0')}`
          : `\\u${code.toString(16).padStart(4, '0')}`)
  }
  return shown
}
