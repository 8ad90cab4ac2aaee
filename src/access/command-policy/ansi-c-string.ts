/**
 * @module access/command-policy/ansi-c-string
 * Decodes the inside of bash's `$'…'` quoting, so that `$'\x73udo'` is seen as `sudo`.
 */

const SIMPLE_ESCAPES: Readonly<Record<string, string>> = {
  a: '\x07',
  b: '\b',
  e: '\x1b',
  E: '\x1b',
  f: '\f',
  n: '\n',
  r: '\r',
  t: '\t',
  v: '\v',
  '\\': '\\',
  "'": "'",
  '"': '"',
  '?': '?',
}

/** Each numeric escape: its introducer, the digits it accepts and how many at most. */
const NUMERIC_ESCAPES: Readonly<Record<string, { digits: RegExp; max: number; radix: number }>> = {
  x: { digits: /^[0-9a-fA-F]/, max: 2, radix: 16 },
  u: { digits: /^[0-9a-fA-F]/, max: 4, radix: 16 },
  U: { digits: /^[0-9a-fA-F]/, max: 8, radix: 16 },
}

/**
 * The text `$'inside'` stands for, or undefined when it holds something the policy will not
 * guess at (a NUL, which ends the word in bash, or a code point out of range).
 *
 * @example
 * decodeAnsiCString('\\x73udo') // 'sudo'
 */
export function decodeAnsiCString(inside: string): string | undefined {
  let result = ''
  let index = 0
  while (index < inside.length) {
    const character = inside[index] as string
    if (character !== '\\' || index + 1 >= inside.length) {
      result += character
      index += 1
      continue
    }
    const next = inside[index + 1] as string
    index += 2
    const simple = SIMPLE_ESCAPES[next]
    if (simple !== undefined) {
      result += simple
      continue
    }
    if (next === 'c' && index < inside.length) {
      // bash's TOCTRL: `\c?` is DEL, any other character its low five bits (`\c@` is a NUL);
      // `\c\\` takes both backslashes.
      const control = inside[index] as string
      index += control === '\\' && inside[index + 1] === '\\' ? 2 : 1
      const code = control === '?' ? 0x7f : control.charCodeAt(0) & 0x1f
      if (code === 0) return undefined
      result += String.fromCharCode(code)
      continue
    }
    const numeric = NUMERIC_ESCAPES[next]
    const octal = /[0-7]/.test(next)
    if (numeric === undefined && !octal) {
      result += `\\${next}`
      continue
    }
    const spec = numeric ?? { digits: /^[0-7]/, max: 3, radix: 8 }
    let digits = octal ? next : ''
    while (digits.length < spec.max && spec.digits.test(inside.slice(index, index + 1))) {
      digits += inside[index] as string
      index += 1
    }
    if (digits === '') {
      result += `\\${next}`
      continue
    }
    // bash stores an octal or hex escape in one byte: `\455` is 0x12d, so `-` (0x2d).
    const parsed = Number.parseInt(digits, spec.radix)
    const code = numeric === undefined || next === 'x' ? parsed & 0xff : parsed
    if (code === 0 || code > 0x10ffff) return undefined
    result += next === 'u' || next === 'U' ? String.fromCodePoint(code) : String.fromCharCode(code)
  }
  return result
}
