/**
 * @module workspace/git/diff-header-path
 * The path a patch's `diff --git` header names, as git writes it: plain, or C-quoted when the
 * name has a byte past ASCII, a quote, a backslash or a control character.
 */

/**
 * The path a `diff --git a/P b/P` header names (no renames: both sides are one path). git quotes
 * a name with a byte past ASCII, a quote, a backslash or a control character, C style
 * (`"a/\303\251.txt"`); a name with ` b/` in it is taken by length, not by a pattern. The header
 * is read as latin1 (one character per byte); the path answered is UTF-8, as diffTrees names it.
 */
export function diffHeaderPath(header: string): string | undefined {
  if (!header.startsWith('diff --git ')) return undefined
  const sides = header.slice('diff --git '.length)
  if (sides.startsWith('"')) {
    const bytes = unquoteC(sides)
    return bytes?.startsWith('a/') === true
      ? Buffer.from(bytes.slice(2), 'latin1').toString('utf8')
      : undefined
  }
  // `a/P b/P`: P is as long as the rest allows.
  const length = (sides.length - 5) / 2
  if (!Number.isInteger(length) || length < 1 || !sides.startsWith('a/')) return undefined
  const path = sides.slice(2, 2 + length)
  return sides === `a/${path} b/${path}` ? Buffer.from(path, 'latin1').toString('utf8') : undefined
}

const C_ESCAPES: Readonly<Record<string, string>> = {
  a: '\x07',
  b: '\b',
  t: '\t',
  n: '\n',
  v: '\v',
  f: '\f',
  r: '\r',
  '"': '"',
  '\\': '\\',
}

/** The bytes (latin1) of the C-quoted string `text` starts with, or undefined if it is none. */
function unquoteC(text: string): string | undefined {
  let bytes = ''
  for (let index = 1; index < text.length; index++) {
    const character = text[index] as string
    if (character === '"') return bytes
    if (character !== '\\') {
      bytes += character
      continue
    }
    const next = text[index + 1] ?? ''
    const octal = /^[0-3][0-7]{2}/.exec(text.slice(index + 1, index + 4))?.[0]
    if (octal !== undefined) {
      bytes += String.fromCharCode(Number.parseInt(octal, 8))
      index += 3
    } else if (C_ESCAPES[next] !== undefined) {
      bytes += C_ESCAPES[next]
      index += 1
    } else return undefined
  }
  return undefined
}
