/**
 * One definition per concept: a set of names (a union of string literals, or a constant array
 * of strings) is declared once, at the lowest layer that needs it, and imported everywhere
 * else. Two declarations of the same set drift apart; this test finds them.
 */
import assert from 'node:assert/strict'
import fs from 'node:fs'
import path from 'node:path'
import { it } from 'node:test'
import { fileURLToPath } from 'node:url'
import ts from 'typescript'

const SRC = fileURLToPath(new URL('../src/', import.meta.url))

/** Sets of fewer names are words, not concepts (`'ro' | 'rw'`, `'file' | 'directory'`). */
const MIN_NAMES = 3

interface Declaration {
  readonly where: string
  readonly names: readonly string[]
}

function sourceFiles(): string[] {
  return fs
    .readdirSync(SRC, { withFileTypes: true, recursive: true })
    .filter(
      (entry) => entry.isFile() && /\.m?ts$/.test(entry.name) && !/\.test\.m?ts$/.test(entry.name),
    )
    .map((entry) => path.join(entry.parentPath, entry.name))
}

/** The string literals of a union type or an array literal, when it holds nothing else. */
function literalSet(node: ts.Node): string[] | undefined {
  let elements: readonly ts.Node[]
  if (ts.isUnionTypeNode(node)) {
    elements = node.types.map((type) => (ts.isLiteralTypeNode(type) ? type.literal : type))
  } else if (ts.isArrayLiteralExpression(node)) {
    elements = node.elements
  } else return undefined
  const names = elements.map((element) =>
    ts.isStringLiteral(element) || ts.isNoSubstitutionTemplateLiteral(element)
      ? element.text
      : undefined,
  )
  if (names.some((name) => name === undefined)) return undefined
  return [...new Set(names as string[])].sort()
}

/** Strips `as const`, `satisfies` and `Object.freeze(…)` from an initializer. */
function unwrap(node: ts.Expression): ts.Expression {
  if (ts.isAsExpression(node) || ts.isSatisfiesExpression(node)) return unwrap(node.expression)
  if (ts.isParenthesizedExpression(node)) return unwrap(node.expression)
  if (
    ts.isCallExpression(node) &&
    node.expression.getText() === 'Object.freeze' &&
    node.arguments[0] !== undefined
  )
    return unwrap(node.arguments[0])
  return node
}

function declarations(file: string): Declaration[] {
  const text = fs.readFileSync(file, 'utf8')
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true)
  const found: Declaration[] = []
  const where = (node: ts.Node, name: string) =>
    `${path.relative(SRC, file)}:${source.getLineAndCharacterOfPosition(node.getStart()).line + 1} ${name}`
  const visit = (node: ts.Node): void => {
    if (ts.isTypeAliasDeclaration(node)) {
      const names = literalSet(node.type)
      if (names !== undefined) found.push({ where: where(node, node.name.text), names })
    }
    if (ts.isVariableDeclaration(node) && node.initializer !== undefined) {
      const names = literalSet(unwrap(node.initializer))
      if (names !== undefined) found.push({ where: where(node, node.name.getText()), names })
    }
    ts.forEachChild(node, visit)
  }
  visit(source)
  return found
}

it('declares each set of names once', () => {
  const bySet = new Map<string, string[]>()
  for (const file of sourceFiles()) {
    for (const declaration of declarations(file)) {
      if (declaration.names.length < MIN_NAMES) continue
      const key = declaration.names.join('\0')
      bySet.set(key, [...(bySet.get(key) ?? []), declaration.where])
    }
  }
  const repeated = [...bySet]
    .filter(([, places]) => places.length > 1)
    .map(([key, places]) => `${key.split('\0').join(' | ')}:\n    ${places.join('\n    ')}`)
  assert.deepEqual(
    repeated,
    [],
    `declared more than once (declare it once, at the lowest layer that needs it, and import it):\n  ${repeated.join('\n  ')}`,
  )
})

it('names each module file once: an interface and its implementation never share a name', () => {
  const byName = new Map<string, string[]>()
  for (const file of sourceFiles()) {
    const name = path.basename(file)
    // A folder's entry point is named by its folder, a package entry by its subpath (`eitri/jail`).
    if (name === 'index.ts' || path.relative(SRC, file).startsWith(`entry${path.sep}`)) continue
    byName.set(name, [...(byName.get(name) ?? []), path.relative(SRC, file)])
  }
  const shared = [...byName.values()].filter((files) => files.length > 1)
  assert.deepEqual(shared, [], 'rename one of each: a name says which concept a file holds')
})
