/**
 * @module access/command-policy/syntax-error
 * A syntax error message from the grammar's tree. Tree-sitter recovers from errors instead of
 * stopping, so the policy looks for the first ERROR or MISSING node and names it.
 */
import type { Node } from 'web-tree-sitter'

/** The longest excerpt of the offending text a message quotes. */
const MAX_EXCERPT_CHARACTERS = 40

/**
 * Describes the first error in a tree whose root `hasError`.
 *
 * @example
 * describeSyntaxError(parser.parse('if true; then').rootNode) // 'missing "fi" at line 1, column 14'
 */
export function describeSyntaxError(root: Node): string {
  const culprit = firstError(root)
  if (culprit === undefined) return 'the command is not valid shell'
  const where = `at line ${culprit.startPosition.row + 1}, column ${culprit.startPosition.column + 1}`
  if (culprit.isMissing) return `missing ${JSON.stringify(culprit.type)} ${where}`
  const text = culprit.text.trim()
  if (text === '') return `unexpected end of the command ${where}`
  const excerpt =
    text.length > MAX_EXCERPT_CHARACTERS ? `${text.slice(0, MAX_EXCERPT_CHARACTERS)}…` : text
  return `unexpected ${JSON.stringify(excerpt)} ${where}`
}

function firstError(node: Node): Node | undefined {
  if (node.isError || node.isMissing) return node
  if (!node.hasError) return undefined
  for (const child of node.children) {
    const found = firstError(child)
    if (found !== undefined) return found
  }
  return undefined
}
