/**
 * @module access/command-policy/read-redirect
 * Reads a redirection node. The grammar hangs more than the redirection on it: words after the
 * target (`rm >/dev/null -rf /` gives `-rf` and `/` as extra "destinations"), and for a
 * here-document the rest of the line (`cat <<EOF | sh`, `cat <<EOF && x`). Those are handed
 * back so that no word and no command is lost.
 */
import type { Node } from 'web-tree-sitter'
import { isQuotedHeredoc } from './backticks.ts'
import { readHeredocBody, readWord, type SubstitutionReader } from './read-word.ts'
import { literalWord, type Redirect, type ShellWord } from './shell-syntax.ts'

/** What one redirection node holds. */
export interface RedirectReading {
  readonly redirects: Redirect[]
  /** Words that belong to the command, not to the redirection. */
  readonly extraWords: ShellWord[]
  /** Pipelines that continue after a here-document's first line (`cat <<EOF | sh`). */
  readonly pipelines: Node[]
  /** Statements that follow a here-document's first line (`cat <<EOF && x`). */
  readonly statements: Node[]
}

/** The redirection node types of the grammar. */
export const REDIRECT_TYPES: ReadonlySet<string> = new Set([
  'file_redirect',
  'heredoc_redirect',
  'herestring_redirect',
])

/** Reads one redirection node (see the module comment for what else it may carry). */
export function readRedirect(node: Node, read: SubstitutionReader): RedirectReading {
  const reading = emptyReading()
  let descriptor: number | undefined
  let operator = ''
  let target: ShellWord | undefined
  let body: ShellWord | undefined
  node.children.forEach((child, index) => {
    const field = node.fieldNameForChild(index)
    if (child.type === 'file_descriptor') descriptor = Number(child.text)
    else if (!child.isNamed && field !== 'operator') operator ||= child.type
    else if (field === 'destination') {
      const word = readWord(child, read)
      if (target === undefined) target = word
      else reading.extraWords.push(word)
    } else if (field === 'argument') reading.extraWords.push(readWord(child, read))
    else if (field === 'redirect') mergeReading(reading, readRedirect(child, read))
    else if (field === 'right') reading.statements.push(child)
    else if (child.type === 'pipeline') reading.pipelines.push(child)
    else if (child.type === 'heredoc_body')
      body = readHeredocBody(child, isQuotedHeredoc(child), read)
    else if (child.type === 'heredoc_start' || child.type === 'heredoc_end' || !child.isNamed)
      return
    else if (node.type === 'herestring_redirect') body = readWord(child, read)
    else reading.extraWords.push(readWord(child, read))
  })
  if (node.type === 'heredoc_redirect' && body === undefined) body = literalWord('')
  reading.redirects.unshift({ text: node.text, operator, descriptor, target, body })
  return reading
}

/** A reading with nothing in it, to merge readings into. */
export function emptyReading(): RedirectReading {
  return { redirects: [], extraWords: [], pipelines: [], statements: [] }
}

/** Appends everything `from` holds to `into`. */
export function mergeReading(into: RedirectReading, from: RedirectReading): void {
  into.redirects.push(...from.redirects)
  into.extraWords.push(...from.extraWords)
  into.pipelines.push(...from.pipelines)
  into.statements.push(...from.statements)
}
