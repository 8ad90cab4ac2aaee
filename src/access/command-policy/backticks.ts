/**
 * @module access/command-policy/backticks
 * Bash's old-style command substitution, `` `…` ``, read as bash reads it. Inside backquotes a
 * backslash escapes only `$`, `` ` `` and `\`, and the text between is parsed again as a
 * script; the tree-sitter grammar does not do this for nested backquotes, for backquotes in
 * `${…}` or in here-documents, so the policy does it here rather than miss a command.
 */
import type { Node } from 'web-tree-sitter'

/**
 * The script inside a backquoted substitution, as bash parses it: `` \` ``, `\$` and `\\`
 * unescaped, every other backslash kept.
 *
 * @example
 * backtickScript('echo \\`id\\`') // 'echo `id`'
 */
export function backtickScript(inside: string): string {
  return inside.replace(/\\([`$\\])/g, '$1')
}

/** True when `text` holds a backquote that is not escaped by a backslash. */
export function hasUnescapedBacktick(text: string): boolean {
  for (let index = 0; index < text.length; index += 1) {
    if (text[index] === '\\') index += 1
    else if (text[index] === '`') return true
  }
  return false
}

/**
 * The scripts of every backquoted substitution in literal text where the shell would still
 * run them (an unquoted word, double-quoted text, an unquoted here-document). Undefined when a
 * backquote is never closed, which bash reports as a syntax error.
 *
 * @example
 * backtickScripts('use `npm test` here') // ['npm test']
 */
export function backtickScripts(text: string): string[] | undefined {
  const scripts: string[] = []
  let index = 0
  while (index < text.length) {
    const character = text[index]
    if (character === '\\') {
      index += 2
      continue
    }
    if (character !== '`') {
      index += 1
      continue
    }
    let end = index + 1
    while (end < text.length && text[end] !== '`') end += text[end] === '\\' ? 2 : 1
    if (end >= text.length) return undefined
    scripts.push(backtickScript(text.slice(index + 1, end)))
    index = end + 1
  }
  return scripts
}

/** Nodes whose text the shell never expands, or that the collector reads on its own. */
const LITERAL_NODE_TYPES = new Set(['raw_string', 'ansi_c_string', 'comment'])

/**
 * The scripts of backquoted substitutions that the grammar left inside literal text (see the
 * module comment). Undefined when one of them is never closed.
 */
export function hiddenBacktickScripts(root: Node): string[] | undefined {
  const scripts: string[] = []
  let unclosed = false
  const scan = (text: string): void => {
    if (!hasUnescapedBacktick(text)) return
    const found = backtickScripts(text)
    if (found === undefined) unclosed = true
    else scripts.push(...found)
  }
  const visit = (node: Node): void => {
    if (LITERAL_NODE_TYPES.has(node.type)) return
    if (node.type === 'command_substitution' && node.text.startsWith('`')) return
    if (node.type === 'heredoc_body') {
      if (!isQuotedHeredoc(node)) scan(heredocTextOutsideSubstitutions(node))
      return
    }
    if (node.childCount === 0) scan(node.text)
    else for (const child of node.children) visit(child)
  }
  visit(root)
  return unclosed ? undefined : scripts
}

/** True for the body of `<<'EOF'`, `<<"EOF"` or `<<\EOF`, which the shell never expands. */
export function isQuotedHeredoc(body: Node): boolean {
  const start = body.parent?.children.find((child) => child.type === 'heredoc_start')
  return start !== undefined && /['"\\]/.test(start.text)
}

/** The body's text with each `$(…)` the grammar did parse replaced by a placeholder. */
function heredocTextOutsideSubstitutions(body: Node): string {
  let text = ''
  let position = body.startIndex
  for (const child of body.namedChildren) {
    if (child.type !== 'command_substitution') continue
    text += body.text.slice(position - body.startIndex, child.startIndex - body.startIndex) + '$_'
    position = child.endIndex
  }
  return text + body.text.slice(position - body.startIndex)
}
