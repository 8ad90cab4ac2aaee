/**
 * @module eval/sandbox/prepare-code
 * Turns one eval's JavaScript or TypeScript into code whose top-level definitions persist in
 * the session: each top-level `let`, `const`, `var`, `class` and `function` becomes a global of
 * the isolate (so a later eval may declare the same name again), the body runs in an async
 * function (so top-level `await` works), and the value of the last expression statement (as a
 * script's completion value would be) is returned. Lines are kept
 * where they were, so the guest's stack traces point at its own code.
 *
 * The input is parsed as JavaScript first; only if that fails are TypeScript types stripped
 * (`module.stripTypeScriptTypes`, the swc-based stripper inside Node) and the result parsed.
 * Types are never checked: a type error is not a runtime error.
 */
import { parse, type Node, type Pattern, type Program, type Statement } from 'acorn'
import { stripTypeScriptTypes } from 'node:module'
import { PositionMap, type Anchor } from './position-map.ts'

/** The name guest frames carry in stack traces. */
export const GUEST_FILENAME = '<eval>'

/** A script ready to compile, or why the input is not one. */
export type PreparedCode =
  | {
      readonly ok: true
      /**
       * The body of a closure called with the prelude's `start` as `$0` and the eval's id as
       * `$1`: it hands `start` the names to declare as globals and the eval as an async function
       * (whose own `$0`, `$1` hide the closure's from the guest).
       */
      readonly script: string
      /** Maps the script's positions back to the guest's code. */
      readonly positions: PositionMap
    }
  | { readonly ok: false; readonly message: string }

interface Edit {
  readonly at: number
  readonly end: number
  readonly text: string
}

const PARSE_OPTIONS = {
  ecmaVersion: 'latest',
  sourceType: 'script',
  allowAwaitOutsideFunction: true,
} as const

/** Prepares `code` for one eval. Never throws. */
export function prepareCode(code: string): PreparedCode {
  let source = code
  let program: Program
  try {
    program = parse(source, PARSE_OPTIONS)
  } catch (javascriptError) {
    try {
      source = stripTypeScriptTypes(code, { mode: 'strip' })
    } catch (typescriptError) {
      return { ok: false, message: syntaxMessage(javascriptError, typescriptError) }
    }
    try {
      program = parse(source, PARSE_OPTIONS)
    } catch (error) {
      return { ok: false, message: syntaxMessage(error) }
    }
  }
  return rewrite(source, program)
}

function rewrite(source: string, program: Program): PreparedCode {
  const names = new Set<string>()
  const functions: string[] = []
  const edits: Edit[] = []
  const body = program.body
  for (const statement of body) {
    if (statement.type === 'VariableDeclaration') {
      edits.push(...declarationEdits(source, statement, names))
    } else if (statement.type === 'FunctionDeclaration' && statement.id !== null) {
      names.add(statement.id.name)
      functions.push(statement.id.name)
    } else if (statement.type === 'ClassDeclaration' && statement.id !== null) {
      names.add(statement.id.name)
      edits.push({ at: statement.start, end: statement.start, text: `${statement.id.name} = ` })
      edits.push({ at: statement.end, end: statement.end, text: ';' })
    }
  }
  markCompletion(body as Statement[], edits)
  // Function declarations stay where they are (hoisted inside the eval) and are copied to the
  // global object as the body starts (after a directive prologue, which must come first).
  const copies = functions.map((name) => `this.${name} = ${name};`).join('')
  const hasPrologue = body[0] !== undefined && isDirective(body[0])
  if (hasPrologue && copies !== '') {
    const firstCode = body.find((statement) => !isDirective(statement))
    const at = firstCode?.start ?? source.length
    // First among edits at the same place, so it lands before a `return (` or `C = `.
    edits.unshift({ at, end: at, text: copies })
  }
  const prefix = `return $0($1, ${JSON.stringify([...names])}, async function ($0, $1) {${hasPrologue ? '' : copies}`
  const { text, anchors } = applyEdits(source, edits, prefix.length)
  const script = `${prefix}${text}\n;return $1})`
  return { ok: true, script, positions: new PositionMap(source, script, anchors) }
}

/**
 * `const a = 1, {b} = o;` → `(a = (1), {b} = (o));` and `let c` → `(c = undefined);`, editing
 * only the glue so the names and initializers keep their places.
 */
function declarationEdits(
  source: string,
  declaration: Extract<Statement, { type: 'VariableDeclaration' }>,
  names: Set<string>,
): Edit[] {
  if (declaration.kind !== 'var' && declaration.kind !== 'let' && declaration.kind !== 'const') {
    return [] // `using` declarations stay local to the eval: they end with it.
  }
  const first = declaration.declarations[0]
  const last = declaration.declarations.at(-1)
  if (first === undefined || last === undefined) return []
  const keyword = source.slice(declaration.start, first.start)
  const edits: Edit[] = [
    { at: declaration.start, end: first.start, text: `(${'\n'.repeat(countNewlines(keyword))}` },
  ]
  for (const declarator of declaration.declarations) {
    for (const name of boundNames(declarator.id)) names.add(name)
    const init = declarator.init
    if (init !== null && init !== undefined) {
      edits.push({ at: init.start, end: init.start, text: '(' })
      edits.push({ at: init.end, end: init.end, text: ')' })
    } else if (declaration.kind !== 'var') {
      edits.push({ at: declarator.id.end, end: declarator.id.end, text: ' = undefined' })
    } else {
      // `var a` keeps a's value: `(a)` only reads it (the prelude has declared it).
    }
  }
  edits.push({
    at: last.end,
    end: last.end,
    text: source[declaration.end - 1] === ';' ? ')' : ');',
  })
  return edits
}

function countNewlines(text: string): number {
  let count = 0
  for (const character of text) if (character === '\n') count++
  return count
}

function boundNames(pattern: Pattern): string[] {
  switch (pattern.type) {
    case 'Identifier':
      return [pattern.name]
    case 'ObjectPattern':
      return pattern.properties.flatMap((property) =>
        property.type === 'RestElement'
          ? boundNames(property.argument)
          : boundNames(property.value),
      )
    case 'ArrayPattern':
      return pattern.elements.flatMap((element) => (element === null ? [] : boundNames(element)))
    case 'RestElement':
      return boundNames(pattern.argument)
    case 'AssignmentPattern':
      return boundNames(pattern.left)
    case 'MemberExpression':
      return []
  }
}

/** A `'use strict'` directive (other lone strings are values, as in a REPL). */
function isDirective(statement: Node): boolean {
  return (
    statement.type === 'ExpressionStatement' &&
    (statement as { directive?: string }).directive === 'use strict'
  )
}

/**
 * Marks the statements whose value is the eval's value, as a script's completion value would
 * be: the last statement that is not a declaration, and inside an `if`, `try` or block, the
 * last such statement of each branch. Each stores its value in `$1` (the eval function's own
 * second parameter), which the function returns at its end.
 */
function markCompletion(statements: readonly Statement[], edits: Edit[]): void {
  const last = statements.findLast(
    (statement) =>
      statement.type !== 'FunctionDeclaration' &&
      statement.type !== 'ClassDeclaration' &&
      statement.type !== 'VariableDeclaration' &&
      statement.type !== 'EmptyStatement' &&
      !isDirective(statement),
  )
  if (last === undefined) return
  if (last.type === 'ExpressionStatement') {
    edits.push({ at: last.expression.start, end: last.expression.start, text: '$1 = (' })
    edits.push({ at: last.expression.end, end: last.expression.end, text: ')' })
  } else if (last.type === 'BlockStatement') {
    markCompletion(last.body, edits)
  } else if (last.type === 'IfStatement') {
    markCompletion([last.consequent], edits)
    if (last.alternate !== null && last.alternate !== undefined) {
      markCompletion([last.alternate], edits)
    }
  } else if (last.type === 'TryStatement') {
    markCompletion(last.block.body, edits)
    if (last.handler !== null && last.handler !== undefined) {
      markCompletion(last.handler.body.body, edits)
    }
  } else if (last.type === 'LabeledStatement') {
    markCompletion([last.body], edits)
  }
}

/** Applies edits after a prefix of `offset` characters, noting where the texts line up. */
function applyEdits(
  source: string,
  edits: readonly Edit[],
  offset: number,
): { text: string; anchors: Anchor[] } {
  const sorted = [...edits].sort((a, b) => a.at - b.at || a.end - b.end)
  const anchors: Anchor[] = [{ generated: offset, original: 0 }]
  let result = ''
  let position = 0
  for (const edit of sorted) {
    result += source.slice(position, edit.at)
    anchors.push({ generated: offset + result.length, original: edit.at, inserted: true })
    result += edit.text
    position = Math.max(position, edit.end)
    anchors.push({ generated: offset + result.length, original: position })
  }
  return { text: result + source.slice(position), anchors }
}

function syntaxMessage(error: unknown, typescriptError?: unknown): string {
  const javascript = error instanceof Error ? error.message : String(error)
  const located = /\((\d+):(\d+)\)$/.exec(javascript)
  const base = located === null ? javascript : javascript.slice(0, located.index).trimEnd()
  const where = located === null ? '' : ` (line ${located[1]}, column ${Number(located[2]) + 1})`
  const typescript =
    typescriptError instanceof Error &&
    (typescriptError as { code?: string }).code === 'ERR_UNSUPPORTED_TYPESCRIPT_SYNTAX'
      ? `; as TypeScript: ${typescriptError.message} (only erasable TypeScript is accepted: no enums or namespaces)`
      : ''
  return `SyntaxError: ${base}${where}${typescript}`
}
