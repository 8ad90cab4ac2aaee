import assert from 'node:assert/strict'
import { describe, it } from 'node:test'
import { secretMasker } from './secret-forms.ts'

const SECRET = 'S3cret-Value/0451+é'
/** As long as the secret and of the same kinds of characters, but another value. */
const UNRELATED = 'Q9ndom-Thing/7713+ü'
const PLACEHOLDER = '${secret:TOKEN}'

/**
 * Each form: how it encodes a value (as the bytes a response carries) and how a guest would get
 * the value back from them, which is what the controls run.
 */
const FORMS: Record<
  string,
  { encode: (value: string) => Buffer; decode: (bytes: Buffer) => string }
> = {
  'JSON with \\/ escaped': {
    encode: (value) => Buffer.from(JSON.stringify({ token: value }).replaceAll('/', '\\/')),
    decode: (bytes) => (JSON.parse(bytes.toString()) as { token: string }).token,
  },
  'JSON \\uXXXX, every character': {
    encode: (value) =>
      Buffer.from(
        `"${[...value].map((c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).join('')}"`,
      ),
    decode: (bytes) => JSON.parse(bytes.toString()) as string,
  },
  'JSON \\uXXXX, upper case, JSON inside JSON': {
    encode: (value) =>
      Buffer.from(
        JSON.stringify(
          `"${[...value].map((c) => `\\u${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`).join('')}"`,
        ),
      ),
    decode: (bytes) => JSON.parse(JSON.parse(bytes.toString()) as string) as string,
  },
  ...Object.fromEntries(
    [0, 1, 2].map((offset) => [
      `base64 at offset ${offset}`,
      {
        encode: (value: string) =>
          Buffer.from(
            Buffer.concat([
              Buffer.from('xyz'.slice(0, offset)),
              Buffer.from(value),
              Buffer.from('!'),
            ]).toString('base64'),
          ),
        decode: (bytes: Buffer) =>
          Buffer.from(bytes.toString(), 'base64').toString().slice(offset, -1),
      },
    ]),
  ),
  'base64url at offset 1, wrapped at 4 characters': {
    encode: (value) =>
      Buffer.from(
        (
          Buffer.concat([Buffer.from('x'), Buffer.from(value)])
            .toString('base64url')
            .match(/.{1,4}/g) ?? []
        ).join('\r\n'),
      ),
    decode: (bytes) =>
      Buffer.from(bytes.toString().replaceAll('\r\n', ''), 'base64url').toString().slice(1),
  },
  'hex, lower case': {
    encode: (value) => Buffer.from(Buffer.from(value).toString('hex')),
    decode: (bytes) => Buffer.from(bytes.toString(), 'hex').toString(),
  },
  'hex, upper case, colons': {
    encode: (value) =>
      Buffer.from((Buffer.from(value).toString('hex').toUpperCase().match(/../g) ?? []).join(':')),
    decode: (bytes) => Buffer.from(bytes.toString().replaceAll(':', ''), 'hex').toString(),
  },
  'UTF-16 little-endian': {
    encode: (value) => Buffer.from(value, 'utf16le'),
    decode: (bytes) => bytes.toString('utf16le'),
  },
  'UTF-16 big-endian': {
    encode: (value) => Buffer.from(value, 'utf16le').swap16(),
    decode: (bytes) => Buffer.from(bytes).swap16().toString('utf16le'),
  },
  'HTML decimal references': {
    encode: (value) => Buffer.from([...value].map((c) => `&#${c.codePointAt(0)};`).join('')),
    decode: (bytes) =>
      bytes
        .toString()
        .replace(/&#(\d+);/g, (_, code: string) => String.fromCodePoint(Number(code))),
  },
  'HTML hex references and named ones, mixed with plain characters': {
    encode: (value) =>
      Buffer.from(
        [...value]
          .map((c, index) =>
            c === '/'
              ? '&sol;'
              : c === '+'
                ? '&plus;'
                : index % 2 === 0
                  ? `&#x${c.codePointAt(0)?.toString(16)}` + ';'
                  : c,
          )
          .join(''),
      ),
    decode: (bytes) =>
      bytes
        .toString()
        .replaceAll('&sol;', '/')
        .replaceAll('&plus;', '+')
        .replace(/&#x([0-9a-f]+);/g, (_, code: string) => String.fromCodePoint(parseInt(code, 16))),
  },
  'URL-encoded, every byte': {
    encode: (value) =>
      Buffer.from(
        [...Buffer.from(value)]
          .map((byte) => `%${byte.toString(16).toUpperCase().padStart(2, '0')}`)
          .join(''),
      ),
    decode: (bytes) => decodeURIComponent(bytes.toString()),
  },
  'URL-encoded as a form, twice': {
    encode: (value) =>
      Buffer.from(encodeURIComponent(new URLSearchParams({ t: value }).toString().slice(2))),
    decode: (bytes) =>
      new URLSearchParams(`t=${decodeURIComponent(bytes.toString())}`).get('t') ?? '',
  },
  'JavaScript \\x escapes of the UTF-8 bytes': {
    encode: (value) =>
      Buffer.from(
        [...Buffer.from(value)].map((byte) => `\\x${byte.toString(16).padStart(2, '0')}`).join(''),
      ),
    decode: (bytes) =>
      Buffer.from(
        bytes
          .toString()
          .split('\\x')
          .slice(1)
          .map((hex) => parseInt(hex, 16)),
      ).toString(),
  },
}

const masker = secretMasker([{ value: SECRET, placeholder: PLACEHOLDER }])

describe('the forms of a secret', () => {
  for (const [name, form] of Object.entries(FORMS)) {
    it(`masks it ${name}`, () => {
      const response = Buffer.concat([
        Buffer.from('before '),
        form.encode(SECRET),
        Buffer.from(' after'),
      ])
      // The control for the attack: unmasked, a guest gets the value back.
      assert.equal(form.decode(form.encode(SECRET)), SECRET)
      const masked = masker.bytes(response).toString('latin1')
      assert.ok(masked.includes(PLACEHOLDER), masked)
      assert.ok(masked.startsWith('before ') && masked.endsWith(' after'), masked)
      assert.ok(!masked.includes(form.encode(SECRET).toString('latin1')), masked)
      // The control for the masking: the same form of another value is left alone.
      const other = Buffer.concat([
        Buffer.from('before '),
        form.encode(UNRELATED),
        Buffer.from(' after'),
      ])
      assert.deepEqual(masker.bytes(other), other)
      assert.equal(form.decode(form.encode(UNRELATED)), UNRELATED)
    })
  }

  it('masks text as its UTF-8, ASCII letters in any case, and leaves text without a form as it is (the same string)', () => {
    const text = `a ${SECRET.replace(/[a-z]/g, (c) => c.toUpperCase())} and ${SECRET}, é ü`
    assert.equal(masker.text(text), `a ${PLACEHOLDER} and ${PLACEHOLDER}, é ü`)
    const clean = `nothing here: ${UNRELATED} ${Buffer.from(UNRELATED).toString('base64')}`
    assert.equal(masker.text(clean), clean)
  })

  it('keeps the characters at the edges of base64 that carry other bytes too', () => {
    const encoded = Buffer.concat([
      Buffer.from('x'),
      Buffer.from(SECRET),
      Buffer.from('!'),
    ]).toString('base64')
    const masked = masker.text(encoded)
    assert.ok(masked.startsWith(encoded.slice(0, 2)) && masked.includes(PLACEHOLDER), masked)
  })

  it('masks nothing when no secret has a value', () => {
    const none = secretMasker([{ value: '', placeholder: PLACEHOLDER }])
    assert.equal(none.text(SECRET), SECRET)
  })

  it('stays fast on text made to make it backtrack', () => {
    const tricky = secretMasker([
      { value: 'a\\\\\\b+/=&;% x' + 'a'.repeat(30), placeholder: PLACEHOLDER },
    ])
    for (const text of [
      '\\'.repeat(1 << 20),
      '%25'.repeat(1 << 18),
      '&amp;'.repeat(1 << 18),
      'a'.repeat(1 << 20),
    ]) {
      const started = performance.now()
      tricky.text(text)
      assert.ok(performance.now() - started < 2_000, `${text.slice(0, 8)}…`)
    }
  })
})
