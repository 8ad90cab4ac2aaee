/**
 * @module access/command-policy/bash-text-scans
 * Scans of the source as bash reads it, beside the grammar's tree (parser-differences.ts):
 * where bash ends a here-document, where a backquote closes, and the nested substitutions of a
 * node.
 */
import type { Node } from 'web-tree-sitter'

/**
 * The line on which bash ends a here-document whose body starts at `bodyStart`: each line is
 * compared whole with the delimiter, after an unquoted here-document's line continuations are
 * joined and, for `<<-`, leading tabs removed. Undefined when no line ends it.
 */
export function bashHeredocEnd(
  source: string,
  bodyStart: number,
  delimiter: string,
  quoted: boolean,
  stripTabs: boolean,
): { start: number; end: number } | undefined {
  let lineStart = bodyStart
  let line = ''
  for (let index = bodyStart; index <= source.length; index += 1) {
    const character = source[index]
    if (character === undefined || character === '\n') {
      const compared = stripTabs ? line.replace(/^\t+/, '') : line
      if (compared === delimiter) return { start: lineStart, end: index }
      if (character === undefined) return undefined
      line = ''
      lineStart = index + 1
      continue
    }
    if (character === '\\' && !quoted) {
      const next = source[index + 1]
      if (next === '\n') {
        index += 1
        continue
      }
      line += next === undefined ? '\\' : `\\${next}`
      index += 1
      continue
    }
    line += character
  }
  return undefined
}

/** The index of the unescaped backquote that closes one opened before `from`. */
export function closingBacktick(source: string, from: number, limit: number): number | undefined {
  for (let index = from; index < limit; index += 1) {
    if (source[index] === '\\') index += 1
    else if (source[index] === '`') return index
  }
  return undefined
}

/** Ranges of `$(…)`, `` `…` `` and `${…}` nested anywhere in `node`, in source order. */
export function nestedRanges(node: Node): Array<readonly [number, number]> {
  const ranges: Array<readonly [number, number]> = []
  const visit = (parent: Node): void => {
    for (const child of parent.namedChildren) {
      if (child.type === 'command_substitution' || child.type === 'expansion')
        ranges.push([child.startIndex, child.endIndex])
      else visit(child)
    }
  }
  visit(node)
  return ranges
}

export function excerpt(text: string): string {
  return text.length > 40 ? `${text.slice(0, 40)}…` : text
}
