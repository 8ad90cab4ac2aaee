/**
 * @module workspace/glob-pattern
 * A glob a model writes, matched against workspace-relative paths in linear time.
 *
 * picomatch compiles a glob into a JavaScript regular expression, which backtracks: each `*`
 * of a segment is a lazy `[^/]*?`, so `*a*a*a*a*a*a*a*a*a*ab` against a name of forty `a`s took
 * 22 s, and every further star multiplies that. The match runs on eitri's one thread, so one
 * glob call froze the whole server, every connection with it, with no deadline or cancel able to
 * run. Here the glob becomes an RE2 program (re2js, the engine grep already uses), whose match
 * time is linear in the path whatever the pattern (decision 0049).
 *
 * The syntax is the usual one (as picomatch with `dot: true` reads it): `*` and `?` within a
 * folder, `**` as a whole segment across folders (none or more), `[abc]`, `[!a-z]` / `[^a-z]`
 * and POSIX classes within a folder, `{a,b}` alternatives (nested too), `\x` for a literal `x`,
 * a leading `./` ignored. Everything else is literal: parentheses are not extended globs.
 */
import { RE2JS } from 're2js'
import { EitriError } from '../errors/eitri-error.ts'

/** Longest glob accepted: a path is at most 4,096 bytes, and a pattern has no reason to be longer. */
export const MAX_GLOB_LENGTH = 4096

/** Whether a workspace-relative path matches. */
export type GlobMatcher = (path: string) => boolean

/**
 * Compiles `pattern`. With `basename`, a pattern without `/` is matched against a path's last
 * segment (grep's `glob: "*.ts"`).
 *
 * @throws EitriError `invalid_input` when the pattern is longer than {@link MAX_GLOB_LENGTH} or names an
 *   unknown POSIX class.
 * @example
 * compileGlob('src/**\/*.{ts,js}')('src/a/b.ts') // true
 */
export function compileGlob(
  pattern: string,
  { basename = false }: { basename?: boolean } = {},
): GlobMatcher {
  if (pattern.length > MAX_GLOB_LENGTH)
    throw new EitriError(
      'invalid_input',
      `the glob is ${pattern.length} characters long, over the limit of ${MAX_GLOB_LENGTH}`,
    )
  let body = pattern
  while (body.startsWith('./')) body = body.slice(2)
  let regex: RE2JS
  try {
    regex = RE2JS.compile(`^(?:${translate(body, true)})$`, RE2JS.DOTALL)
  } catch (error) {
    // An unknown POSIX class (`[[:nope:]]`) is the one glob the translation cannot express.
    throw new EitriError('invalid_input', `the glob is not valid: ${(error as Error).message}`)
  }
  const lastOnly = basename && !body.includes('/')
  return (path) => regex.matches(lastOnly ? (path.split('/').at(-1) ?? path) : path)
}

/** The RE2 source of a glob (or of one alternative of a brace). */
function translate(glob: string, atSegmentStart: boolean): string {
  let out = ''
  let index = 0
  let segmentStart = atSegmentStart
  while (index < glob.length) {
    const char = glob[index] as string
    if (char === '*' && glob[index + 1] === '*' && segmentStart && wholeSegment(glob, index)) {
      if (index + 2 === glob.length) {
        // A final `**`: anything, folders included (`a/**` also matches `a` itself).
        out = out.endsWith('/') ? `${out.slice(0, -1)}(?:/.*)?` : `${out}.*`
        index += 2
      } else {
        // `**/`: none or more whole folders.
        out += '(?:[^/]*/)*'
        index += 3
      }
      segmentStart = true
      continue
    }
    if (char !== '{') segmentStart = false
    if (char === '*') {
      while (glob[index] === '*') index++
      out += '[^/]*'
      continue
    }
    if (char === '?') {
      out += '[^/]'
    } else if (char === '/') {
      out += '/'
      segmentStart = true
    } else if (char === '\\' && index + 1 < glob.length) {
      index++
      out += RE2JS.quote(glob[index] as string)
    } else if (char === '[') {
      const klass = bracket(glob, index)
      if (klass !== undefined) {
        out += klass.source
        index = klass.end + 1
        continue
      }
      out += RE2JS.quote(char)
    } else if (char === '{') {
      const brace = braces(glob, index)
      if (brace !== undefined) {
        const atStart = index === 0 ? atSegmentStart : glob[index - 1] === '/'
        out += `(?:${brace.alternatives.map((alternative) => translate(alternative, atStart)).join('|')})`
        index = brace.end + 1
        continue
      }
      out += RE2JS.quote(char)
    } else {
      out += RE2JS.quote(char)
    }
    index++
  }
  return out
}

/** Whether the `**` at `index` is a whole segment (`/` or the end follows). */
function wholeSegment(glob: string, index: number): boolean {
  const after = glob[index + 2]
  return after === undefined || after === '/'
}

/** A bracket expression at `start`, as an RE2 class that never matches `/`; undefined if unclosed. */
function bracket(glob: string, start: number): { source: string; end: number } | undefined {
  let index = start + 1
  const negated = glob[index] === '!' || glob[index] === '^'
  if (negated) index++
  let content = ''
  let first = true
  while (index < glob.length) {
    const char = glob[index] as string
    if (char === ']' && !first) {
      if (content === '') return undefined
      return { source: negated ? `[^/${content}]` : `[${content}]`, end: index }
    }
    first = false
    if (char === '[' && glob[index + 1] === ':') {
      const close = glob.indexOf(':]', index + 2)
      const name = close === -1 ? '' : glob.slice(index + 2, close)
      if (/^[a-z]+$/.test(name)) {
        content += `[:${name}:]`
        index = close + 2
        continue
      }
    }
    if (char === '\\' && index + 1 < glob.length) {
      index++
      content += escapeInClass(glob[index] as string)
    } else if (char === '-' && content !== '' && glob[index + 1] !== ']') {
      content += '-'
    } else if (char !== '/') {
      content += escapeInClass(char)
    }
    index++
  }
  return undefined
}

function escapeInClass(char: string): string {
  return /[\\\]^[-]/.test(char) ? `\\${char}` : char
}

/** A brace group at `start` with its top-level alternatives; undefined if unclosed or one alone. */
function braces(glob: string, start: number): { alternatives: string[]; end: number } | undefined {
  let depth = 0
  let from = start + 1
  const alternatives: string[] = []
  for (let index = start; index < glob.length; index++) {
    const char = glob[index]
    if (char === '\\') {
      index++
      continue
    }
    if (char === '{') depth++
    else if (char === '}') {
      depth--
      if (depth === 0) {
        alternatives.push(glob.slice(from, index))
        return alternatives.length < 2 ? undefined : { alternatives, end: index }
      }
    } else if (char === ',' && depth === 1) {
      alternatives.push(glob.slice(from, index))
      from = index + 1
    }
  }
  return undefined
}
