/**
 * @module access/command-policy/shell-syntax
 * The shell as the policy sees it: plain data extracted from the parser's tree, with every word
 * split into what is literal and what is only known when the command runs.
 */

/** One shell word (a command name, an argument, a redirection target, a here-document). */
export interface ShellWord {
  /** The word as written. */
  readonly text: string
  /**
   * The word after quote removal, when it holds no expansion or substitution. A leading `~`,
   * `$HOME` or `${HOME}` is kept as `~`, because the policy knows what it names.
   */
  readonly value: string | undefined
  /** The literal text before the first expansion; equals `value` when the word is literal. */
  readonly staticPrefix: string
  /** True when an unquoted `*`, `?`, `[` or `{` lets the shell expand the word to other words. */
  readonly glob: boolean
  /** The literal word as a glob pattern: quoted glob characters escaped with a backslash. */
  readonly pattern: string
  /** Every simple command inside the word's substitutions (`$(…)`, backticks, `<(…)`). */
  readonly substitutions: readonly SimpleCommand[]
  /**
   * True when the word, though only known at run time, can never be an option: a lone process
   * substitution (`<(sort a)`) expands to a file name such as `/dev/fd/63`.
   */
  readonly operandOnly?: boolean
  /**
   * True when the word, though only known at run time, always becomes exactly one word: every
   * expansion in it is inside double quotes and none is `"$@"`-like. Unquoted, bash splits an
   * expansion's value on blanks and drops it when empty (see {@link isOneWord}).
   */
  readonly oneWord?: boolean
}

/**
 * `NAME=value`, before a command or on its own (`export`/`local`/`declare` are commands whose
 * words hold theirs). An index other than digits is kept in the name (`a[i]`).
 */
export interface Assignment {
  readonly name: string
  readonly value: ShellWord | undefined
}

/** A redirection: `> file`, `2>&1`, `<<EOF`, `<<< text`. */
export interface Redirect {
  readonly text: string
  /** The operator as written: `>`, `>>`, `&>`, `<`, `<<`, `<<<`, `>&`, …. */
  readonly operator: string
  /** The file descriptor written before the operator, if any. */
  readonly descriptor: number | undefined
  /** The file (or descriptor) the operator points at; undefined for here-documents. */
  readonly target: ShellWord | undefined
  /** The text fed to standard input by a here-document or here-string. */
  readonly body: ShellWord | undefined
}

/** Where a simple command's standard input comes from. */
export type StandardInput =
  | { readonly type: 'inherited' }
  | { readonly type: 'pipe'; readonly upstream: readonly SimpleCommand[] }
  | { readonly type: 'document'; readonly body: ShellWord }
  | { readonly type: 'file'; readonly target: ShellWord | undefined }

/** A simple command: assignments, a name, arguments and redirections. */
export interface SimpleCommand {
  readonly text: string
  readonly assignments: readonly Assignment[]
  /** The name (first) and the arguments; empty for `FOO=1 >file` with no command. */
  readonly words: readonly ShellWord[]
  readonly redirects: readonly Redirect[]
  readonly stdin: StandardInput
}

/** Something the policy judges on its own. */
export type ShellUnit =
  | { readonly type: 'command'; readonly command: SimpleCommand }
  | {
      readonly type: 'assignment'
      readonly text: string
      readonly assignments: readonly Assignment[]
    }
  | { readonly type: 'redirect'; readonly text: string; readonly redirects: readonly Redirect[] }
  /**
   * `[[ … ]]` tests: they only touch the shell's own state, unless `risk` says why they (or
   * the arithmetic anywhere in a script) could run a command hidden in a variable's value.
   */
  | { readonly type: 'construct'; readonly text: string; readonly risk?: string }

/**
 * A parsed command: every unit in source order, substitutions before the command using them;
 * or why it was not read: invalid shell (`error`), or a construct bash could read otherwise
 * than the parser, so that the units found might not be the commands bash runs (`ambiguous`).
 */
export type ParsedShell =
  | { readonly type: 'parsed'; readonly units: readonly ShellUnit[] }
  | { readonly type: 'error'; readonly message: string }
  | { readonly type: 'ambiguous'; readonly message: string }

/**
 * True when the shell makes exactly one word of `word`. A glob or a brace expansion can make
 * none or several (`{1,touch,x}` is three words, `{,}` none), and so can an unquoted
 * expansion (`$x` holding `1 touch x`, or nothing): where the policy reads one word (an
 * option's value, `timeout`'s duration), the words after it would be read out of place.
 */
export function isOneWord(word: ShellWord): boolean {
  if (word.value === undefined)
    return !word.glob && (word.oneWord === true || word.operandOnly === true)
  return !word.glob || !expandsToWords(word.pattern)
}

/**
 * True when a literal word's pattern (quoted specials escaped) holds a glob character (`*`,
 * `?`, `[`) or a brace expansion (`{` with a `,` or `..` after it): `{}` alone is one word.
 */
function expandsToWords(pattern: string): boolean {
  let braces = 0
  for (let index = 0; index < pattern.length; index += 1) {
    const character = pattern[index]
    if (character === '\\') index += 1
    else if (character === '*' || character === '?' || character === '[') return true
    else if (character === '{') braces += 1
    else if (character === '}') braces = Math.max(0, braces - 1)
    else if (braces > 0 && (character === ',' || pattern.startsWith('..', index))) return true
  }
  return false
}

/** A word made by the policy itself (arguments that `xargs` or `find` add at run time). */
export function dynamicWord(text: string, staticPrefix = ''): ShellWord {
  return { text, value: undefined, staticPrefix, glob: false, pattern: '', substitutions: [] }
}

/** A literal word made by the policy itself. */
export function literalWord(value: string): ShellWord {
  return {
    text: value,
    value,
    staticPrefix: value,
    glob: false,
    pattern: value.replace(/[*?[\]{}()!+@\\]/g, '\\$&'),
    substitutions: [],
  }
}
