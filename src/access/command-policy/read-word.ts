/**
 * @module access/command-policy/read-word
 * Turns a word of the parser's tree into a {@link ShellWord}: quotes removed as the shell
 * removes them, every expansion marked as only known at run time.
 */
import type { Node } from 'web-tree-sitter'
import { decodeAnsiCString } from './ansi-c-string.ts'
import { hasUnescapedBacktick } from './backticks.ts'
import type { ShellWord, SimpleCommand } from './shell-syntax.ts'

/** Collects the simple commands of a `$(…)`, backtick or `<(…)` node. */
export type SubstitutionReader = (node: Node) => readonly SimpleCommand[]

const SUBSTITUTIONS = new Set(['command_substitution', 'process_substitution'])
/** Characters with which an unquoted word can expand to other words (globs and braces). */
const GLOB_CHARACTERS = new Set(['*', '?', '[', '{'])
/** Characters a glob pattern gives a meaning to; escaped in a pattern when they were quoted. */
const PATTERN_SPECIALS = /[*?[\]{}()!+@|\\]/

/** Accumulates one word, piece by piece. */
class WordBuilder {
  value = ''
  pattern = ''
  staticPrefix = ''
  dynamic = false
  glob = false
  /** Inside double quotes, where an expansion is not split into words. */
  quoted = false
  /** An expansion the shell may split into several words or drop (see `isOneWord`). */
  splits = false
  readonly substitutions: SimpleCommand[] = []

  get empty(): boolean {
    return !this.dynamic && this.value === ''
  }

  /** Literal text; `quoted` text is never expanded by the shell. */
  literal(text: string, quoted: boolean): void {
    if (this.dynamic) return
    this.value += text
    this.staticPrefix += text
    if (quoted) {
      for (const character of text)
        this.pattern += PATTERN_SPECIALS.test(character) ? `\\${character}` : character
    } else this.pattern += text
  }

  unquoted(text: string): void {
    // A backquote the grammar left in literal text still runs a command (see backticks.ts).
    if (hasUnescapedBacktick(text)) {
      this.markDynamic()
      this.splits = true
    }
    let index = 0
    if (this.empty && text.startsWith('~')) {
      // Tilde expansion: `~`, `~/x` and `~user` name a home folder, which the policy knows.
      const end = text.includes('/') ? text.indexOf('/') : text.length
      this.literal('~', true)
      index = end
    }
    for (; index < text.length; index += 1) {
      const character = text[index] as string
      if (character === '\\') {
        const escaped = text[index + 1]
        index += 1
        if (escaped !== undefined && escaped !== '\n') this.literal(escaped, true)
        continue
      }
      if (GLOB_CHARACTERS.has(character)) this.glob = true
      this.literal(character, false)
    }
  }

  markDynamic(): void {
    this.dynamic = true
  }

  /** An expansion `text`: split into words unless quoted, and `"$@"`, `"${a[@]}"` even then. */
  expansion(text: string): void {
    this.markDynamic()
    if (!this.quoted || text.includes('@')) this.splits = true
  }

  build(text: string): ShellWord {
    return {
      text,
      value: this.dynamic ? undefined : this.value,
      staticPrefix: this.staticPrefix,
      glob: this.glob,
      pattern: this.dynamic ? '' : this.pattern,
      substitutions: this.substitutions,
      ...(this.dynamic && !this.splits && !this.glob ? { oneWord: true } : {}),
    }
  }
}

/**
 * Reads `node` as one shell word. Nested substitutions are handed to `readSubstitution`, which
 * records their commands; the word keeps them in `substitutions`.
 */
export function readWord(node: Node, readSubstitution: SubstitutionReader): ShellWord {
  const builder = new WordBuilder()
  appendNode(builder, node, readSubstitution)
  const word = builder.build(node.text)
  return node.type === 'process_substitution' ? { ...word, operandOnly: true } : word
}

function appendNode(builder: WordBuilder, node: Node, read: SubstitutionReader): void {
  switch (node.type) {
    case 'word':
    case 'extglob_pattern':
    case 'brace_expression':
      builder.unquoted(node.text)
      return
    case 'number':
    case 'variable_name':
    case 'test_operator':
    case 'regex':
      if (node.namedChildCount === 0) builder.unquoted(node.text)
      else dynamicNode(builder, node, read)
      return
    case 'raw_string':
      builder.literal(node.text.slice(1, -1), true)
      return
    case 'ansi_c_string': {
      const decoded = decodeAnsiCString(node.text.slice(2, -1))
      if (decoded === undefined) builder.markDynamic()
      else builder.literal(decoded, true)
      return
    }
    case 'string':
      appendDoubleQuoted(builder, node, read)
      return
    case 'translated_string':
    case 'concatenation':
      for (const child of node.children)
        if (!isLocaleDollar(child)) appendNode(builder, child, read)
      return
    case 'simple_expansion':
    case 'expansion':
      if (builder.empty && isHome(node)) builder.literal('~', true)
      else dynamicNode(builder, node, read)
      return
    default:
      // `$`, a lone `"` of a translated string: tokens without meaning of their own.
      if (!node.isNamed && node.type !== '"') {
        builder.literal(node.text, false)
        return
      }
      if (!node.isNamed) return
      dynamicNode(builder, node, read)
  }
}

/**
 * The `$` of `$"…"`, which the grammar keeps as a token of its own before the string. Bash
 * translates the string and drops the `$`: `rm $"/"` removes `/`.
 */
export function isLocaleDollar(node: Node): boolean {
  const next = node.nextSibling
  return (
    node.type === '$' &&
    !node.isNamed &&
    next !== null &&
    next.startIndex === node.endIndex &&
    (next.type === 'string' || next.firstChild?.type === 'string')
  )
}

function appendDoubleQuoted(builder: WordBuilder, node: Node, read: SubstitutionReader): void {
  const outside = builder.quoted
  builder.quoted = true
  try {
    appendQuotedChildren(builder, node, read)
  } finally {
    builder.quoted = outside
  }
}

function appendQuotedChildren(builder: WordBuilder, node: Node, read: SubstitutionReader): void {
  const children = node.children
  let position = node.startIndex + 1
  children.forEach((child, index) => {
    if (index === 0) return
    // The grammar leaves some text between its tokens out of every child (the newline of
    // `"$'\n"`), or puts blanks before the closing quote into its token (`"\v"`); either is
    // still part of the string.
    const last = index === children.length - 1
    const end = last ? child.endIndex - 1 : child.startIndex
    if (end > position) quotedText(builder, gapText(node, position, end))
    position = child.endIndex
    if (last) return
    if (child.type === 'string_content') quotedText(builder, child.text)
    else if (!child.isNamed) builder.literal(child.text, true)
    else if ((child.type === 'simple_expansion' || child.type === 'expansion') && builder.empty)
      appendNode(builder, child, read)
    else dynamicNode(builder, child, read)
  })
}

/**
 * Reads a here-document's body. With a quoted delimiter (`<<'EOF'`) it is literal; otherwise
 * it expands like double-quoted text.
 */
export function readHeredocBody(node: Node, quoted: boolean, read: SubstitutionReader): ShellWord {
  const builder = new WordBuilder()
  if (quoted) {
    builder.literal(node.text, true)
    return builder.build(node.text)
  }
  let position = node.startIndex
  for (const child of node.namedChildren) {
    quotedText(builder, gapText(node, position, child.startIndex))
    if (child.type === 'heredoc_content') quotedText(builder, child.text)
    else dynamicNode(builder, child, read)
    position = child.endIndex
  }
  quotedText(builder, gapText(node, position, node.endIndex))
  return builder.build(node.text)
}

function gapText(node: Node, from: number, to: number): string {
  return node.text.slice(from - node.startIndex, to - node.startIndex)
}

function quotedText(builder: WordBuilder, text: string): void {
  if (hasUnescapedBacktick(text)) builder.markDynamic()
  builder.literal(unescapeDoubleQuoted(text), true)
}

/** An expansion or substitution: unknown until run time; its substitutions still run. */
function dynamicNode(builder: WordBuilder, node: Node, read: SubstitutionReader): void {
  builder.expansion(node.text)
  collectSubstitutions(node, read, builder.substitutions)
}

function collectSubstitutions(node: Node, read: SubstitutionReader, into: SimpleCommand[]): void {
  if (SUBSTITUTIONS.has(node.type)) {
    into.push(...read(node))
    return
  }
  for (const child of node.namedChildren) collectSubstitutions(child, read, into)
}

/** `$HOME` or `${HOME}`, plain. */
function isHome(node: Node): boolean {
  const named = node.namedChildren
  return (
    named.length === 1 &&
    named[0]?.type === 'variable_name' &&
    named[0].text === 'HOME' &&
    node.childCount === (node.type === 'expansion' ? 3 : 2)
  )
}

/** Inside double quotes a backslash only escapes `$`, `` ` ``, `"`, `\` and a newline. */
function unescapeDoubleQuoted(text: string): string {
  return text.replace(/\\([$`"\\\n])/g, (_match, escaped: string) =>
    escaped === '\n' ? '' : escaped,
  )
}
