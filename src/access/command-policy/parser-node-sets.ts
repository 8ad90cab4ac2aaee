/**
 * @module access/command-policy/parser-node-sets
 * What parser-differences.ts knows of the two readings, as tables: the characters only bash
 * reads as text, and the grammar's node types by how bash reads them (text, code, words,
 * tokens it splits).
 */

/** Zero-width characters the grammar's scanner may skip; no shell reads them as anything but text. */
const ZERO_WIDTH: ReadonlySet<number> = new Set([0x180e, 0x200b, 0x200c, 0x200d, 0x2060, 0xfeff])

/**
 * True for a character the grammar may take for a space (its `\s`) and bash does not, or a
 * control character: bash separates words with space, tab and newline only.
 */
export function isForeignCharacter(character: string): boolean {
  if (character === ' ' || character === '\t' || character === '\n') return false
  const code = character.codePointAt(0) ?? 0
  if (code < 0x20 || (code >= 0x7f && code <= 0x9f)) return true
  return code > 0x7f && (/\s/u.test(character) || ZERO_WIDTH.has(code))
}

/** Nodes whose every character both bash and the grammar read as text, whatever it is. */
export const TEXT_NODES: ReadonlySet<string> = new Set([
  'string',
  'raw_string',
  'ansi_c_string',
  'translated_string',
  'heredoc_body',
])

/**
 * Nodes inside which the grammar reads characters as code or as a delimiter, so a foreign
 * character there can part the readings (a comment, which the grammar may end at `\r`, too).
 */
export const CODE_NODES: ReadonlySet<string> = new Set([
  'comment',
  'heredoc_start',
  'heredoc_end',
  'expansion',
  'simple_expansion',
  'command_substitution',
  'process_substitution',
  'arithmetic_expansion',
  'subscript',
])

/** Characters after which bash starts a new word (a `#` there starts a comment). */
export const WORD_BREAKS = new Set([' ', '\t', '\n', ';', '&', '|', '(', ')', '<', '>'])

/** A here-document delimiter the grammar and bash read alike: a name, whole-quoted or not. */
export const PLAIN_DELIMITER = /^(?:[A-Za-z0-9_]+|'[A-Za-z0-9_]+'|"[A-Za-z0-9_]+"|\\[A-Za-z0-9_]+)$/

/** Nodes whose word children bash separates with blanks. */
export const SEPARATE_WORDS_PARENTS: ReadonlySet<string> = new Set([
  'command',
  'command_name',
  'declaration_command',
  'unset_command',
  'for_statement',
  'file_redirect',
  'herestring_redirect',
])

/** Tokens of code that bash ends at an unquoted blank or newline. */
export const SPLIT_TOKENS: ReadonlySet<string> = new Set([
  'word',
  'number',
  'variable_name',
  'special_variable_name',
  'extglob_pattern',
  'file_descriptor',
])

/**
 * Text inside `${…}` that reads the same whether bash takes the quote or backslash before it
 * as quoting or as a literal character.
 */
export const INERT_TEXT = /^[^{}'"`$\\\n]*$/

/** A space, tab or newline that no backslash escapes. */
export const UNESCAPED_BLANK = /(?:^|[^\\])(?:\\\\)*[ \t\n]/

/** Node types that make (part of) a word. */
export const WORD_TYPES: ReadonlySet<string> = new Set([
  'word',
  'command_name',
  'string',
  'raw_string',
  'ansi_c_string',
  'translated_string',
  'concatenation',
  'simple_expansion',
  'expansion',
  'command_substitution',
  'process_substitution',
  'arithmetic_expansion',
  'number',
  'brace_expression',
])
