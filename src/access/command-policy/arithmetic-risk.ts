/**
 * @module access/command-policy/arithmetic-risk
 * Bash evaluates arithmetic recursively: a variable whose value is `a[$(id)]` runs `id` when it
 * appears in `$((x))`, `((x))`, `${s:x}`, `${a[x]}`, `${!x}`, `a=([x]=1)`, `[[ x -eq 1 ]]`
 * or `[[ -v a[x] ]]`, and `${x@P}` expands a value as a prompt, running the `$(…)` in it. Values come from files and programs the policy cannot read, so arithmetic
 * that reads a variable (or a substitution's output) keeps the command out of `allow`.
 * Arithmetic on numbers alone and on `$#`, `$?`, `$$` and `$!` is harmless. Even a loop
 * counter (`for ((i = 0; …))`) counts as a variable: the loop's body could set it to any text.
 */
import type { Node } from 'web-tree-sitter'

/** Why `root` holds arithmetic that could run commands hidden in a value, if it does. */
export interface ArithmeticRisk {
  readonly text: string
  readonly reason: string
}

/** Node types of arithmetic that are only operators or numbers. */
const PURE_ARITHMETIC = new Set([
  'number',
  'binary_expression',
  'unary_expression',
  'parenthesized_expression',
  'ternary_expression',
  'postfix_expression',
])
/** Special parameters that always hold a number. */
const NUMERIC_SPECIALS = new Set(['#', '?', '$', '!'])
/** `[[ … ]]` operators that compare their operands as arithmetic. */
const ARITHMETIC_TESTS = new Set(['-eq', '-ne', '-lt', '-le', '-gt', '-ge'])

/** The first risky arithmetic in `root`, searched depth first. */
export function findArithmeticRisk(root: Node): ArithmeticRisk | undefined {
  const risky = (node: Node, why: string): ArithmeticRisk => ({
    text: node.text,
    reason: why.includes('prompt')
      ? `${firstLine(node.text)} ${why}`
      : `${firstLine(node.text)} ${why}, and bash evaluates a value such as a[$(…)] there as a command`,
  })
  const visit = (node: Node): ArithmeticRisk | undefined => {
    const why = nodeRisk(node)
    if (why !== undefined) return risky(node, why)
    for (const child of node.namedChildren) {
      const found = visit(child)
      if (found !== undefined) return found
    }
    return undefined
  }
  return visit(root)
}

function nodeRisk(node: Node): string | undefined {
  switch (node.type) {
    case 'arithmetic_expansion':
      return isPure(node) ? undefined : 'does arithmetic on a variable or output'
    case 'compound_statement':
      return node.child(0)?.type === '((' && !isPure(node)
        ? 'does arithmetic on a variable'
        : undefined
    case 'c_style_for_statement':
      return 'does arithmetic on a variable'
    case 'expansion':
      return expansionRisk(node)
    case 'subscript': {
      const index = node.childForFieldName('index')
      return index !== null && !isPlainIndex(index) ? 'indexes an array with a variable' : undefined
    }
    case 'test_command':
      return node.child(0)?.type === '[[' ? doubleBracketRisk(node) : undefined
    case 'array': {
      // `a=([i]=1)`: the index of an element is arithmetic too.
      const indexes = node.namedChildren.map((element) => /^\[([^\]]*)\]=/.exec(element.text)?.[1])
      return indexes.some((index) => index !== undefined && !/^\d+$/.test(index))
        ? 'sets an array element at an index computed from a variable'
        : undefined
    }
    default:
      return undefined
  }
}

/** True when the arithmetic in `node` reads no variable and no output. */
function isPure(node: Node): boolean {
  return node.namedChildren.every((child) => {
    if (PURE_ARITHMETIC.has(child.type)) return isPure(child)
    return child.type === 'simple_expansion' && isNumericSpecial(child)
  })
}

function isNumericSpecial(node: Node): boolean {
  const named = node.namedChildren
  return (
    named.length === 1 &&
    named[0]?.type === 'special_variable_name' &&
    NUMERIC_SPECIALS.has(named[0].text)
  )
}

/** An index that is a number, `@` or `*`. */
function isPlainIndex(index: Node): boolean {
  if (index.type === 'number') return true
  if (index.type === 'unary_expression')
    return index.namedChildren.every((child) => child.type === 'number')
  return index.type === 'word' && (index.text === '@' || index.text === '*')
}

/**
 * `${s:offset:length}` with a variable, `${!name}` (the value names another variable), or
 * `${x@P}` (the value is expanded as a prompt, `$(…)` and all).
 */
function expansionRisk(node: Node): string | undefined {
  if (node.text.endsWith('@P}')) return 'expands a value as a prompt, which runs the commands in it'
  const tokens = node.children
  const indirect = tokens[1]?.type === '!'
  const last = tokens.at(-2)
  if (indirect && last?.type !== '*' && last?.type !== '@' && tokens[2]?.type !== 'subscript') {
    return 'expands a variable named by another variable'
  }
  const colon = tokens.findIndex((token) => token.type === ':')
  if (colon === -1) return undefined
  const operands = tokens.slice(colon + 1).filter((token) => token.isNamed)
  const pure = operands.every(
    (operand) =>
      operand.type === 'number' ||
      (operand.type === 'simple_expansion' && isNumericSpecial(operand)),
  )
  return pure ? undefined : 'takes a substring at an offset computed from a variable'
}

/** `[[ x -eq y ]]` with a variable, or `[[ -v name ]]` with an index or an expansion. */
function doubleBracketRisk(node: Node): string | undefined {
  for (const expression of node.descendantsOfType(['binary_expression', 'unary_expression'])) {
    if (expression === null) continue
    const operator = expression.childForFieldName('operator')?.text ?? ''
    if (expression.type === 'binary_expression' && ARITHMETIC_TESTS.has(operator)) {
      const sides = [expression.childForFieldName('left'), expression.childForFieldName('right')]
      const pure = sides.every(
        (side) =>
          side !== null &&
          (side.type === 'number' || (side.type === 'simple_expansion' && isNumericSpecial(side))),
      )
      if (!pure) return `compares ${operator} as arithmetic on a variable`
    }
    if (expression.type === 'unary_expression' && (operator === '-v' || operator === '-R')) {
      const name = expression.namedChildren.at(-1)
      const literal = name !== undefined && isLiteral(name)
      const text = name?.type === 'raw_string' ? name.text.slice(1, -1) : (name?.text ?? '')
      const index = /\[(.*)\]$/s.exec(text)?.[1]
      if (!literal || (index !== undefined && !/^\d+$/.test(index))) {
        return `tests ${operator} on a name that may hold an index`
      }
    }
  }
  return undefined
}

/** A word without quotes but single ones, and without expansions. */
function isLiteral(node: Node): boolean {
  if (node.type === 'word' || node.type === 'raw_string' || node.type === 'number') return true
  return node.type === 'concatenation' && node.namedChildren.every(isLiteral)
}

function firstLine(text: string): string {
  const line = text.split('\n')[0] ?? ''
  return line.length > 60 ? `${line.slice(0, 60)}…` : line
}
