/**
 * @module access/command-policy/parser-differences
 * Where tree-sitter's bash grammar reads a script differently from bash. The policy judges the
 * commands the grammar finds; a spot where bash would split the text into commands differently
 * (end a here-document sooner, see a word where the grammar sees a comment, close a `${…}`
 * elsewhere) could hide a command bash runs. So before anything is judged, every place where
 * the two readings are known to part is checked against bash's own rule, and a script where
 * they could part is refused whole (`ambiguous-syntax`), whatever its commands: the policy
 * cannot know which commands it holds.
 *
 * The checks are invariants over the source, not a list of bad spellings:
 * - only space, tab and newline separate words (the grammar also takes `\v`, `\f`, `\r` and
 *   Unicode spaces; bash does not): other blanks and control characters stand only inside a
 *   quoted string or here-document body, where both read them as text;
 * - a backslash in code escapes a character inside one token of the grammar, and a line
 *   continuation (backslash-newline, which bash deletes) stands next to a blank; in any text
 *   bash expands (double quotes, an unquoted here-document) none follows a `$`;
 * - `#` starts a comment exactly where bash starts one: at the start of a word;
 * - a here-document's body starts on the line bash starts it (after the command's line) and
 *   ends on the line bash ends it (its delimiter read with bash's quote removal, lines joined
 *   and tabs stripped as bash does), and its delimiter is a plain word;
 * - `<<` in code is a here-document (or a shift inside arithmetic);
 * - `${…}` closes at the brace bash closes it at, and holds no quotes or backslashes, whose
 *   meaning there depends on the operator and on bash's version;
 * - every `$(`, `$[`, `<(` and `>(` where bash starts a substitution is one in the grammar's
 *   tree (bash runs `<(…)` in the word of an unquoted `${x:-…}`, the grammar reads text).
 */
import type { Node, TreeCursor } from 'web-tree-sitter'
import { isQuotedHeredoc } from './backticks.ts'
import { bashHeredocEnd, closingBacktick, nestedRanges, excerpt } from './bash-text-scans.ts'
import {
  isForeignCharacter,
  TEXT_NODES,
  CODE_NODES,
  WORD_BREAKS,
  PLAIN_DELIMITER,
  SEPARATE_WORDS_PARENTS,
  SPLIT_TOKENS,
  INERT_TEXT,
  UNESCAPED_BLANK,
  WORD_TYPES,
} from './parser-node-sets.ts'

/** Where a character of the source stands, as the grammar read it. */
type Context =
  /** Never expanded: `'…'`, `$'…'`, a comment, a quoted here-document's body, a delimiter. */
  | 'literal'
  /** Double-quoted text or an unquoted here-document's body: only `$`, `` ` `` and `\` act. */
  | 'quoted'
  /** Inside `${…}`: its own rules, checked by the expansion check. */
  | 'expansion'
  /** Inside arithmetic (`$((…))`, `((…))`, an index). */
  | 'arithmetic'
  | 'code'

/**
 * Describes the first place where bash could read `source` differently from the grammar's tree
 * `root`, with what to write instead; undefined when there is none.
 *
 * @example
 * findParserDifference('cat <<E"O"F\nEOF\nid\nE"O"F', root) // 'the here-document delimiter E"O"F …'
 */
export function findParserDifference(source: string, root: Node): string | undefined {
  return new DifferenceFinder(source, root).find()
}

/** Nodes that open where bash starts a substitution (`$(…)`, `$((…))`, `$[…]`). */
const SUBSTITUTIONS = new Set(['command_substitution', 'arithmetic_expansion'])

class DifferenceFinder {
  readonly #source: string
  readonly #root: Node

  constructor(source: string, root: Node) {
    this.#source = source
    this.#root = root
  }

  find(): string | undefined {
    return (
      this.#foreignCharacter() ??
      this.#backslashes() ??
      this.#comments() ??
      this.#heredocs() ??
      this.#expansions() ??
      this.#substitutions() ??
      this.#processSubstitutions() ??
      this.#words()
    )
  }

  /**
   * The grammar splits words where bash does: one walk over the tree checks that no token of
   * code holds a blank or newline bash would split at, that the parts of one word (a
   * concatenation) touch, and that two words of a command do not.
   */
  #words(): string | undefined {
    const cursor = this.#root.walk()
    try {
      return this.#walk(cursor, '', 0)
    } finally {
      cursor.delete()
    }
  }

  /** Checks the children of the cursor's node (of type `parent`), then their subtrees. */
  #walk(cursor: TreeCursor, parent: string, expansions: number): string | undefined {
    if (!cursor.gotoFirstChild()) return undefined
    const inside = expansions + (parent === 'expansion' ? 1 : 0)
    let beforeType = ''
    let beforeEnd = -1
    do {
      const type = cursor.nodeType
      const start = cursor.startIndex
      const end = cursor.endIndex
      if (parent === 'concatenation' && beforeEnd !== -1 && beforeEnd !== start) {
        return `the policy's parser reads ${this.#excerptAt(beforeEnd)} as part of one word where bash ends the word; write it another way`
      }
      if (
        SEPARATE_WORDS_PARENTS.has(parent) &&
        beforeEnd === start &&
        WORD_TYPES.has(beforeType) &&
        WORD_TYPES.has(type)
      ) {
        return `the policy's parser reads two words ${this.#where(start)} where bash reads one; quote the whole word`
      }
      if (
        inside === 0 &&
        SPLIT_TOKENS.has(type) &&
        UNESCAPED_BLANK.test(this.#source.slice(start, end))
      ) {
        return `the policy's parser reads ${this.#excerptAt(start)} as one word where bash splits it at a blank or newline; quote the word`
      }
      const difference = this.#walk(cursor, type, inside)
      if (difference !== undefined) return difference
      beforeType = type
      beforeEnd = end
    } while (cursor.gotoNextSibling())
    cursor.gotoParent()
    return undefined
  }

  /**
   * A character bash does not take for a blank but the grammar might, outside quoted text. A
   * NUL cannot reach bash at all (it ends the string bash is given), so it is refused anywhere.
   */
  #foreignCharacter(): string | undefined {
    const source = this.#source
    for (let at = 0; at < source.length;) {
      const index = at
      const character = String.fromCodePoint(source.codePointAt(index) ?? 0)
      at += character.length
      if (!isForeignCharacter(character)) continue
      if (character !== '\0' && this.#insideText(index)) continue
      const code = (character.codePointAt(0) ?? 0).toString(16).toUpperCase().padStart(4, '0')
      return `the command holds the character U+${code} ${this.#where(index)} outside quotes, which the policy's parser can take for a space and bash does not (bash separates words with spaces, tabs and newlines only); use those, and write other characters inside quotes or with $'\\u${code}'`
    }
    return undefined
  }

  /** True when the grammar reads `index` as the text of a quoted string or here-document. */
  #insideText(index: number): boolean {
    for (
      let node = this.#root.descendantForIndex(index, index + 1);
      node !== null;
      node = node.parent
    ) {
      if (TEXT_NODES.has(node.type)) return true
      if (CODE_NODES.has(node.type)) return false
    }
    return false
  }

  /** Escapes in code must sit inside one token; line continuations must stand by a blank. */
  #backslashes(): string | undefined {
    const source = this.#source
    for (const match of source.matchAll(/\\+/g)) {
      const end = match.index + match[0].length
      if (match[0].length % 2 === 0 || end >= source.length) continue
      const backslash = end - 1
      const context = this.#context(backslash)
      // Bash deletes a line continuation in double quotes and unquoted here-documents too, so
      // `"$\`+newline+`(id)"` is `"$(id)"` to bash and text to the grammar: after a `$`, which
      // then means something else with the next character, none is taken in any expanded text.
      if (source[end] === '\n' && context !== 'literal' && this.#followsDollar(backslash)) {
        return `the line continuation (a backslash at the end of a line) ${this.#where(backslash)} joins a "$" to the next line, which bash reads as an expansion or substitution and the policy's parser as text; write the "$" and what follows it on one line`
      }
      if (context !== 'code' && context !== 'arithmetic') continue
      if (source[end] === '\n') {
        if (this.#continuationIsSeparated(backslash)) continue
        return `the line continuation (a backslash at the end of a line) ${this.#where(backslash)} joins two words or operators, which bash reads as one and the policy's parser as two; put a space before the backslash`
      }
      const node = this.#root.descendantForIndex(backslash, end + 1)
      if (node !== null && node.childCount === 0) continue
      return `the escaped character ${JSON.stringify(source.slice(backslash, end + 1))} ${this.#where(backslash)} is read by bash as part of a word and by the policy's parser as a separator; quote it instead ('…')`
    }
    return undefined
  }

  /** True when bash sees an unescaped `$` just before the line continuation at `backslash`. */
  #followsDollar(backslash: number): boolean {
    const before = this.#previousIndex(backslash)
    return before >= 0 && this.#source[before] === '$' && !this.#escaped(before)
  }

  /** True when bash (which deletes `\`+newline) and the grammar (a separator) split alike. */
  #continuationIsSeparated(backslash: number): boolean {
    const before = this.#previousIndex(backslash)
    const after = this.#nextIndex(backslash + 2)
    const blank = (index: number): boolean =>
      index < 0 || index >= this.#source.length || /[ \t\n]/.test(this.#source[index] ?? '')
    return (blank(before) && !this.#escaped(before)) || blank(after)
  }

  /** `#` starts a comment for the grammar exactly where bash starts one. */
  #comments(): string | undefined {
    const source = this.#source
    for (let index = source.indexOf('#'); index !== -1; index = source.indexOf('#', index + 1)) {
      if (this.#escaped(index)) continue
      const node = this.#root.descendantForIndex(index, index + 1)
      const comment = node?.type === 'comment' && node.startIndex === index
      const wordStart = this.#startsWord(index)
      if (comment && wordStart) {
        index = node.endIndex - 1
        continue
      }
      if (comment) {
        return `the policy's parser reads a comment ${this.#where(index)} where bash reads the "#" as part of a word; put a space before the "#" or quote it`
      }
      if (!wordStart) continue
      const context = this.#context(index)
      if (context !== 'code' && context !== 'arithmetic') continue
      return `bash starts a comment with the "#" ${this.#where(index)} but the policy's parser reads it as part of a word; quote the "#" or put the comment on its own line`
    }
    return undefined
  }

  /** True when bash starts a new word at `index` (the start, or after a blank or operator). */
  #startsWord(index: number): boolean {
    const before = this.#previousIndex(index)
    if (before < 0) return true
    return WORD_BREAKS.has(this.#source[before] ?? '') && !this.#escaped(before)
  }

  /** Every `<<` in code is a here-document the grammar and bash end on the same line. */
  #heredocs(): string | undefined {
    const source = this.#source
    // Where bash starts the next body, by the newline that ends the command's line: after the
    // line for the first here-document on it, after the previous one's end for the next.
    const nextBodies = new Map<number, number>()
    for (const match of source.matchAll(/<<-?/g)) {
      const index = match.index
      if (source[index + match[0].length] === '<' || source[index - 1] === '<') continue
      if (this.#escaped(index)) continue
      const operator = this.#root.descendantForIndex(index, index + 2)
      const redirect = operator?.parent
      if (redirect?.type === 'heredoc_redirect' && operator?.startIndex === index) {
        const difference = this.#heredoc(redirect, nextBodies)
        if (difference !== undefined) return difference
        continue
      }
      if (this.#context(index) === 'code') {
        return `bash reads the "<<" ${this.#where(index)} as a here-document but the policy's parser does not; write it another way`
      }
    }
    return undefined
  }

  /** The newline that ends the line of code at `from`: unescaped, outside quoted text. */
  #commandLineEnd(from: number): number {
    for (
      let at = this.#source.indexOf('\n', from);
      at !== -1;
      at = this.#source.indexOf('\n', at + 1)
    ) {
      if (!this.#escaped(at) && !this.#insideText(at)) return at
    }
    return -1
  }

  #heredoc(redirect: Node, nextBodies: Map<number, number>): string | undefined {
    const source = this.#source
    const children = redirect.children
    const operator = children[0]
    const start = children.find((child) => child.type === 'heredoc_start')
    if (operator === undefined || start === undefined) return undefined
    const written = start.text
    if (!PLAIN_DELIMITER.test(written)) {
      return `the here-document delimiter ${written} ${this.#where(start.startIndex)} is not a plain word; bash and the policy's parser could end the here-document on different lines, so write it as EOF, 'EOF', "EOF" or \\EOF (letters, digits and _ only)`
    }
    const between = source.slice(operator.endIndex, start.startIndex)
    const after = source[start.endIndex]
    if (/[^ \t]/.test(between) || (after !== undefined && !WORD_BREAKS.has(after))) {
      return `the here-document delimiter ${this.#where(start.startIndex)} is not a word of its own; write "<<EOF" followed by a space or the end of the line`
    }
    const delimiter = written.replace(/['"\\]/g, '')
    const quoted = written !== delimiter
    const stripTabs = operator.type === '<<-'
    const first = children.find(
      (child) => child.type === 'heredoc_body' || child.type === 'heredoc_end',
    )
    const end = children.find((child) => child.type === 'heredoc_end')
    if (first === undefined) {
      return `the here-document ${this.#where(start.startIndex)} has no body; end it with a line holding only ${delimiter}`
    }
    const bodyStart = source.lastIndexOf('\n', first.startIndex - 1) + 1
    if (bodyStart <= start.endIndex) {
      return `the here-document ${this.#where(start.startIndex)} does not start on the next line; write its body after the line of the command`
    }
    // The grammar can take a line that follows a line continuation for more of the command
    // (`cat <<E`, then `\`, then `'$(id)'`), where bash has started the body already.
    const lineEnd = this.#commandLineEnd(start.endIndex)
    const bashStart = lineEnd === -1 ? source.length : (nextBodies.get(lineEnd) ?? lineEnd + 1)
    // Blank lines at the start of a body the grammar leaves out of it; they hold nothing.
    const skipped = source.slice(Math.min(bashStart, bodyStart), Math.max(bashStart, bodyStart))
    if (bashStart > bodyStart || !/^[ \t\n]*$/.test(skipped)) {
      return `bash starts the body of the here-document ${delimiter} ${this.#where(start.startIndex)} on another line than the policy's parser does; write the body on the lines right after the command, with no backslash at the end of its first line`
    }
    nextBodies.set(lineEnd, end === undefined ? source.length : end.endIndex + 1)
    const bashEnd = bashHeredocEnd(source, bodyStart, delimiter, quoted, stripTabs)
    // The grammar's end must be bash's end line: the delimiter alone, after tabs for `<<-`.
    const indent = stripTabs ? /^\t*$/ : /^$/
    const same =
      bashEnd === undefined
        ? end === undefined
        : end !== undefined &&
          end.endIndex === bashEnd.end &&
          end.text === delimiter &&
          indent.test(source.slice(bashEnd.start, end.startIndex))
    if (same) return undefined
    return `bash ends the here-document ${delimiter} ${this.#where(start.startIndex)} on another line than the policy's parser does; end it with a line holding only ${delimiter}${stripTabs ? ' (after tabs)' : ''}, with no backslash at the end of the line before`
  }

  /** Every `${` in code or double quotes opens an expansion that ends where bash ends it. */
  #expansions(): string | undefined {
    const source = this.#source
    for (let index = source.indexOf('${'); index !== -1; index = source.indexOf('${', index + 1)) {
      if (this.#escaped(index)) continue
      const opener = this.#root.descendantForIndex(index, index + 2)
      const expansion = opener?.parent
      if (opener?.type === '${' && expansion?.type === 'expansion') {
        const difference = this.#expansion(expansion)
        if (difference !== undefined) return difference
        continue
      }
      const context = this.#context(index)
      if (context === 'literal') continue
      return `bash reads "\${" ${this.#where(index)} as the start of an expansion but the policy's parser does not; quote it or write it another way`
    }
    return undefined
  }

  /**
   * Every `$(` and `$[` in code, in double quotes or in an unquoted here-document opens a
   * substitution the grammar read as one. It takes a here-document line that starts with blanks
   * for plain text (`cat <<EOF`, then a line `\t$(id)`), where bash runs the command.
   */
  #substitutions(): string | undefined {
    for (const match of this.#source.matchAll(/\$[([]/g)) {
      const index = match.index
      if (this.#escaped(index)) continue
      let node = this.#root.descendantForIndex(index, index + 2)
      while (node !== null && node.startIndex === index && !SUBSTITUTIONS.has(node.type))
        node = node.parent
      if (node !== null && node.startIndex === index) continue
      if (this.#context(index) === 'literal') continue
      return `bash reads "${match[0]}" ${this.#where(index)} as the start of a substitution but the policy's parser does not; start the line with it, quote the here-document's delimiter, or write it another way`
    }
    return undefined
  }

  /**
   * Every `<(` and `>(` outside quoted text and arithmetic is a process substitution the
   * grammar read as one. Bash runs one in the word of an unquoted `${x:-…}`, `${x/a/…}` or
   * `${x:?…}` too, where the grammar reads plain text.
   */
  #processSubstitutions(): string | undefined {
    for (const match of this.#source.matchAll(/[<>]\(/g)) {
      const index = match.index
      if (this.#escaped(index)) continue
      let node = this.#root.descendantForIndex(index, index + 2)
      while (node !== null && node.startIndex === index && node.type !== 'process_substitution')
        node = node.parent
      if (node !== null && node.startIndex === index) continue
      const context = this.#context(index)
      if (context === 'literal' || context === 'quoted' || context === 'arithmetic') continue
      return `bash can read "${match[0]}" ${this.#where(index)} as the start of a process substitution but the policy's parser does not; set a variable to it first (f=<(…); echo "\${x:-$f}") or write it another way`
    }
    return undefined
  }

  /**
   * Bash ends `${` at the first `}` that closes every `{` opened after it, skipping nested
   * `$(…)` and `${…}` (checked on their own). Whether a quote or backslash inside quotes there
   * depends on the operator, on the double quotes around and on bash's version (`${x//'/'}`,
   * `"${x:+'$(id)'}"` runs `id`), so one is accepted only where it cannot matter: an escaped
   * character, or a quoted span, that holds no brace, quote, backslash, `$`, backquote or
   * newline (`${x:-"a b"}`, `${x/#\~/$HOME}`) reads as the same text either way.
   */
  #expansion(expansion: Node): string | undefined {
    const source = this.#source
    const skipped = nestedRanges(expansion)
    let depth = 0
    let range = 0
    let closed = -1
    for (let index = expansion.startIndex + 1; index < expansion.endIndex; index += 1) {
      const skip = skipped[range]
      if (skip !== undefined && index === skip[0]) {
        index = skip[1] - 1
        range += 1
        continue
      }
      const character = source[index]
      if (character === '`') {
        // Bash skips a backquoted command to its closing backquote (see backticks.ts).
        const close = closingBacktick(source, index + 1, expansion.endIndex)
        if (close !== undefined && !/['"]/.test(source.slice(index, close))) {
          index = close
          continue
        }
      }
      if (character === '\\' && INERT_TEXT.test(source[index + 1] ?? '\n')) {
        index += 1
        continue
      }
      if (character === "'" || character === '"') {
        const close = source.indexOf(character, index + 1)
        if (
          close !== -1 &&
          close < expansion.endIndex &&
          INERT_TEXT.test(source.slice(index + 1, close))
        ) {
          index = close
          continue
        }
      }
      if (character === "'" || character === '"' || character === '\\' || character === '`') {
        return `the expansion ${excerpt(expansion.text)} ${this.#where(expansion.startIndex)} holds a quote or backslash around a brace, quote, $ or backquote, where bash and the policy's parser can read it differently; set a variable first (p='…'; echo "\${x//$p/}")`
      }
      if (character === '{') depth += 1
      else if (character === '}') {
        depth -= 1
        if (depth === 0) {
          closed = index
          break
        }
      }
    }
    if (closed === expansion.endIndex - 1) return undefined
    return `bash ends the expansion ${excerpt(expansion.text)} ${this.#where(expansion.startIndex)} at another brace than the policy's parser does; do not write "{" or "}" inside \${…}`
  }

  /** What kind of text `index` stands in, as the grammar read it. */
  #context(index: number): Context {
    for (
      let node = this.#root.descendantForIndex(index, index + 1);
      node !== null;
      node = node.parent
    ) {
      switch (node.type) {
        case 'raw_string':
        case 'ansi_c_string':
        case 'comment':
        case 'heredoc_start':
        case 'heredoc_end':
          return 'literal'
        case 'heredoc_body':
          return isQuotedHeredoc(node) ? 'literal' : 'quoted'
        case 'string':
        case 'translated_string':
          return 'quoted'
        case 'expansion':
          return 'expansion'
        case 'arithmetic_expansion':
        case 'subscript':
          return 'arithmetic'
        case 'compound_statement':
          // `((…))` is arithmetic; `{ …; }` is a block of code.
          if (node.child(0)?.type === '((') return 'arithmetic'
          return 'code'
        case 'command_substitution':
        case 'process_substitution':
          return 'code'
      }
    }
    return 'code'
  }

  /** True when the character at `index` follows an odd run of backslashes. */
  #escaped(index: number): boolean {
    let count = 0
    for (let before = index - 1; before >= 0 && this.#source[before] === '\\'; before -= 1)
      count += 1
    return count % 2 === 1
  }

  /** The index of the character bash sees before `index`, past line continuations. */
  #previousIndex(index: number): number {
    let before = index - 1
    while (before >= 1 && this.#source[before] === '\n' && this.#escaped(before)) before -= 2
    return before
  }

  /** The index of the character bash sees at `index`, past line continuations. */
  #nextIndex(index: number): number {
    let at = index
    while (this.#source[at] === '\\' && this.#source[at + 1] === '\n' && !this.#escaped(at)) at += 2
    return at
  }

  /** A short excerpt of the source from `index` with where it is. */
  #excerptAt(index: number): string {
    return `${JSON.stringify(excerpt(this.#source.slice(index).split('\n')[0] ?? ''))} ${this.#where(index)}`
  }

  #where(index: number): string {
    const before = this.#source.slice(0, index)
    const line = before.split('\n').length
    const column = index - (before.lastIndexOf('\n') + 1) + 1
    return `at line ${line}, column ${column}`
  }
}
