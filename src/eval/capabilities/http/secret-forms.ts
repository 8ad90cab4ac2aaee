/**
 * @module eval/capabilities/http/secret-forms
 * The shapes a secret's value can take in a response, and the masking of all of them. A host a
 * secret is sent to may echo it back in an encoding (an API that reflects its request headers
 * as JSON, a token inside a base64 blob), and a guest that gets the encoded form has the
 * secret. Masking works on bytes (text is masked as its UTF-8), each match replaced with the
 * secret's placeholder. What is masked, exactly, for a value `v`:
 *
 * - **Character escapes**, in any mix, character by character, ASCII letters and hex digits
 *   in any case: `v` itself; JSON and JavaScript escapes (`\uHHHH`, surrogate pairs, `\u{H…}`,
 *   `\xHH` of a character or of each UTF-8 byte, `\/` and any punctuation after one to three
 *   backslashes, so doubly escaped JSON too); percent-encoding of each UTF-8 byte (`%HH`, also
 *   percent-encoded again as `%25HH`, and `+` for a space); HTML numeric character references
 *   (`&#115;`, `&#x73;`, leading zeros, with or without the `;`, also as `&amp;#115;`) and the
 *   named references of ASCII punctuation (`&sol;`, `&amp;`, …).
 * - **Hex** of the UTF-8 bytes, upper or lower case, bytes optionally separated by one space,
 *   colon or dash.
 * - **UTF-16**, little- and big-endian, each byte raw or escaped as above (a NUL as `\u0000`).
 * - **Base64** of the UTF-8 bytes at each of the three alignments (the value starting at any
 *   byte offset of the encoded data), standard or URL-safe alphabet, with line breaks
 *   (raw or JSON-escaped) between characters; of a value at an offset only the characters that
 *   depend on the value alone are matched, so the one or two characters at each edge, which
 *   also carry neighbouring bytes, stay.
 *
 * Not masked: compositions of these (base64 of hex, base64 of UTF-16), other encodings
 * (base32, quoted-printable, UTF-32, compression, encryption), HTML named references of letters
 * and digits, a value split across responses or reversed, and parts of a value. A very short
 * value also masks unrelated text that happens to match one of its forms.
 */

/** Masks every form of a set of secrets. */
export interface SecretMasker {
  /** `text` with every form of every secret replaced by its placeholder. */
  text(text: string): string
  /** `bytes` with every form of every secret replaced by its placeholder's bytes. */
  bytes(bytes: Buffer): Buffer
}

/** HTML named references of ASCII punctuation (HTML 5), with the legacy ones that may end without `;`. */
const NAMED_REFERENCES: Readonly<Record<string, readonly string[]>> = {
  '!': ['excl;'],
  '"': ['quot;?', 'QUOT;?'],
  '#': ['num;'],
  $: ['dollar;'],
  '%': ['percnt;'],
  '&': ['amp;?', 'AMP;?'],
  "'": ['apos;'],
  '(': ['lpar;'],
  ')': ['rpar;'],
  '*': ['ast;', 'midast;'],
  '+': ['plus;'],
  ',': ['comma;'],
  '.': ['period;'],
  '/': ['sol;'],
  ':': ['colon;'],
  ';': ['semi;'],
  '<': ['lt;?', 'LT;?'],
  '=': ['equals;'],
  '>': ['gt;?', 'GT;?'],
  '?': ['quest;'],
  '@': ['commat;'],
  '[': ['lsqb;', 'lbrack;'],
  '\\': ['bsol;'],
  ']': ['rsqb;', 'rbrack;'],
  '^': ['Hat;'],
  _: ['lowbar;', 'UnderBar;'],
  '`': ['grave;', 'DiacriticalGrave;'],
  '{': ['lcub;', 'lbrace;'],
  '|': ['verbar;', 'vert;', 'VerticalLine;'],
  '}': ['rcub;', 'rbrace;'],
  '\t': ['Tab;'],
  '\n': ['NewLine;'],
}

/** Short JSON/JavaScript escapes of control characters. */
const SHORT_ESCAPES: Readonly<Record<string, string>> = {
  '\b': 'b',
  '\f': 'f',
  '\n': 'n',
  '\r': 'r',
  '\t': 't',
  '\v': 'v',
  '\0': '0',
}

/** One to three backslashes: an escape, escaped again once or twice (JSON in JSON). */
const BACKSLASHES = '\\\\{1,3}'

/** The byte `byte` as a regular-expression atom over the Latin-1 view of bytes. */
function byteAtom(byte: number): string {
  return `\\x${byte.toString(16).padStart(2, '0')}`
}

/** `hex` (digits of a number), matching any case and leading zeros. */
function hexDigits(value: number): string {
  return `0*${value.toString(16)}`
}

/** Every escape of one byte: raw, `\xHH`, `\u00HH`, `%HH`, `&#…;`. */
function byteForms(byte: number): string {
  const hex = byte.toString(16).padStart(2, '0')
  return `(?:${byteAtom(byte)}|${BACKSLASHES}(?:x${hex}|u00${hex})|%(?:25)*${hex}|&(?:amp;)*#(?:0*${byte}|x${hexDigits(byte)});?)`
}

/** Every form of one character (code point) in the mix of character escapes. */
function characterForms(character: string): string {
  const codePoint = character.codePointAt(0) ?? 0
  const utf8 = [...Buffer.from(character, 'utf8')]
  const forms: string[] = []
  if (codePoint < 0x80) {
    const literal = byteAtom(codePoint)
    // Punctuation may carry escaping backslashes (`\/`, `\"`); a letter or digit may not, so
    // that `\n` is never read as an `n` of the value.
    forms.push(/[A-Za-z0-9]/.test(character) ? literal : `\\\\{0,3}${literal}`)
    const short = SHORT_ESCAPES[character]
    if (short !== undefined) forms.push(`${BACKSLASHES}${short}`)
    if (character === ' ') forms.push('\\+')
    for (const name of NAMED_REFERENCES[character] ?? []) {
      forms.push(`&(?:amp;)*${name.replace(/[;?]+$/, '')};${name.endsWith('?') ? '?' : ''}`)
    }
  } else {
    forms.push(utf8.map(byteAtom).join(''))
  }
  // The code point escaped: JavaScript's \u{…}, JSON's \uHHHH (a surrogate pair above U+FFFF),
  // HTML's numeric references.
  forms.push(`${BACKSLASHES}u\\{${hexDigits(codePoint)}\\}`)
  if (codePoint <= 0xffff) forms.push(`${BACKSLASHES}u${codePoint.toString(16).padStart(4, '0')}`)
  else {
    const [high, low] = [character.charCodeAt(0), character.charCodeAt(1)]
    forms.push(`${BACKSLASHES}u${high.toString(16)}${BACKSLASHES}u${low.toString(16)}`)
  }
  forms.push(`&(?:amp;)*#(?:0*${codePoint}|x${hexDigits(codePoint)});?`)
  if (codePoint <= 0xff) forms.push(`${BACKSLASHES}x${codePoint.toString(16).padStart(2, '0')}`)
  // Each UTF-8 byte escaped on its own (`\xc3\xa9`, `%C3%A9`; `%73`).
  if (codePoint >= 0x80) forms.push(utf8.map(byteForms).join(''))
  else forms.push(`%(?:25)*${codePoint.toString(16).padStart(2, '0')}`)
  return `(?:${forms.join('|')})`
}

/**
 * `count` backslashes: raw or JSON-escaped (up to four each), or each percent-encoded or an
 * HTML reference.
 */
function backslashRun(count: number): string {
  const escaped = `%(?:25)*5c|&(?:amp;)*(?:#(?:0*92|x0*5c);?|bsol;)`
  return `(?:\\\\{${count},${4 * count}}|(?:${escaped}){${count}})`
}

/** The character escapes of `value`, in any mix. */
function escapedForms(value: string): string {
  let pattern = ''
  // A run of backslashes is one unit, so that runs in the value cannot make the pattern
  // backtrack without end over a run in the text.
  for (const run of value.match(/\\+|[^\\]/gu) ?? []) {
    pattern += run.startsWith('\\') ? backslashRun(run.length) : characterForms(run)
  }
  return pattern
}

/** Hex of `bytes`, bytes optionally separated. */
function hexForm(bytes: Buffer): string {
  return [...bytes].map((byte) => byte.toString(16).padStart(2, '0')).join('[ :-]?')
}

/** UTF-16 of `value` in either byte order, each byte raw or escaped. */
function utf16Forms(value: string): string[] {
  const little = Buffer.from(value, 'utf16le')
  const big = Buffer.from(little).swap16()
  return [little, big].map((bytes) => [...bytes].map(byteForms).join(''))
}

/** Base64 of `bytes` at the three alignments, either alphabet, line breaks allowed. */
function base64Forms(bytes: Buffer): string[] {
  const forms: string[] = []
  const lineBreak = '(?:\\r?\\n|\\\\r\\\\n|\\\\n)?'
  for (let offset = 0; offset < 3; offset++) {
    const encoded = Buffer.concat([Buffer.alloc(offset), bytes]).toString('base64')
    // Only the characters whose six bits all come from the value.
    const stable = encoded.slice(
      Math.ceil((8 * offset) / 6),
      Math.floor((8 * (offset + bytes.length)) / 6),
    )
    if (stable === '') continue
    const atoms = [...stable].map((character) => {
      if (character === '+') return '[+\\-]'
      if (character === '/') return '(?:\\\\{0,3}\\/|_)'
      return character
    })
    forms.push(atoms.join(lineBreak))
  }
  return forms
}

interface CompiledSecret {
  readonly placeholder: string
  /** Case-insensitive forms. */
  readonly anyCase: RegExp
  /** Base64, whose case is meaning. */
  readonly exactCase: RegExp | undefined
}

function compile(value: string, placeholder: string): CompiledSecret {
  const bytes = Buffer.from(value, 'utf8')
  const anyCase = [escapedForms(value), hexForm(bytes), ...utf16Forms(value)]
  const exactCase = base64Forms(bytes)
  return {
    placeholder,
    anyCase: new RegExp(anyCase.map((form) => `(?:${form})`).join('|'), 'gi'),
    exactCase:
      exactCase.length === 0
        ? undefined
        : new RegExp(exactCase.map((form) => `(?:${form})`).join('|'), 'g'),
  }
}

/**
 * A masker for `secrets`: pairs of a value and the placeholder that replaces it. Empty values
 * are left out.
 */
export function secretMasker(
  secrets: readonly { readonly value: string; readonly placeholder: string }[],
): SecretMasker {
  const compiled = secrets
    .filter((secret) => secret.value !== '')
    .map((secret) => compile(secret.value, secret.placeholder))
  // Bytes are masked through their Latin-1 view: one character per byte, so a pattern of bytes
  // is a pattern of characters, and nothing is lost on the way back.
  const maskView = (view: string): string => {
    let masked = view
    for (const secret of compiled) {
      masked = masked.replace(secret.anyCase, () => secret.placeholder)
      if (secret.exactCase !== undefined)
        masked = masked.replace(secret.exactCase, () => secret.placeholder)
    }
    return masked
  }
  return {
    text(text) {
      if (compiled.length === 0) return text
      const view = Buffer.from(text, 'utf8').toString('latin1')
      const masked = maskView(view)
      return masked === view ? text : Buffer.from(masked, 'latin1').toString('utf8')
    },
    bytes(bytes) {
      if (compiled.length === 0) return bytes
      const view = bytes.toString('latin1')
      const masked = maskView(view)
      return masked === view ? bytes : Buffer.from(masked, 'latin1')
    },
  }
}
