/**
 * @module access/command-policy/parse-shell
 * Parses a shell command with the bash grammar and collects every simple command anywhere in
 * it: in lists, pipelines, subshells, blocks, loops, functions, substitutions and here-documents.
 * The walk is generic on purpose: a node it has no special case for is searched through, so a
 * construct it does not know cannot hide a command.
 */
import type { Node, Parser } from 'web-tree-sitter'
import { EitriError } from '../../errors/eitri-error.ts'
import { findArithmeticRisk } from './arithmetic-risk.ts'
import { backtickScript, hiddenBacktickScripts } from './backticks.ts'
import {
  emptyReading,
  mergeReading,
  readRedirect,
  REDIRECT_TYPES,
  type RedirectReading,
} from './read-redirect.ts'
import { findParserDifference } from './parser-differences.ts'
import { isLocaleDollar, readWord } from './read-word.ts'
import {
  dynamicWord,
  literalWord,
  type Assignment,
  type ParsedShell,
  type ShellUnit,
  type ShellWord,
  type SimpleCommand,
  type StandardInput,
} from './shell-syntax.ts'
import { describeSyntaxError } from './syntax-error.ts'

/** Backquotes nested deeper than this are refused rather than parsed. */
export const MAX_BACKTICK_DEPTH = 16

const INHERITED: StandardInput = { type: 'inherited' }

/** Grammar nodes that group the words of a `[ … ]` test. */
const TEST_EXPRESSIONS = new Set([
  'unary_expression',
  'binary_expression',
  'parenthesized_expression',
  'negated_expression',
])

/**
 * Parses `source` and collects its units. Never throws for a syntax error: the result says so.
 *
 * @example
 * parseShell(parser, 'ls | wc -l') // { type: 'parsed', units: [ls, wc -l] }
 */
export function parseShell(parser: Parser, source: string): ParsedShell {
  const collector = new ShellCollector(parser)
  try {
    collector.script(source)
    return { type: 'parsed', units: collector.units }
  } catch (error) {
    if (error instanceof AmbiguousSyntax) return { type: 'ambiguous', message: error.message }
    if (EitriError.isInstance(error) && error.code === 'invalid_input')
      return { type: 'error', message: error.message }
    throw error
  }
}

function syntaxError(message: string): EitriError {
  return new EitriError('invalid_input', message)
}

/** Thrown from deep in the collector when bash could read the script otherwise. */
class AmbiguousSyntax extends Error {}

function commandsIn(units: readonly ShellUnit[]): SimpleCommand[] {
  return units.flatMap((unit) => (unit.type === 'command' ? [unit.command] : []))
}

class ShellCollector {
  readonly units: ShellUnit[] = []
  readonly #parser: Parser
  #depth = 0
  readonly #read = (node: Node): readonly SimpleCommand[] => this.#substitution(node)

  constructor(parser: Parser) {
    this.#parser = parser
  }

  script(source: string): void {
    if (this.#depth > MAX_BACKTICK_DEPTH) throw syntaxError('backquotes are nested too deeply')
    const tree = this.#parser.parse(source)
    if (tree === null) throw syntaxError('the shell parser gave up on this command')
    this.#depth += 1
    try {
      const root = tree.rootNode
      if (root.hasError) throw syntaxError(describeSyntaxError(root))
      const difference = findParserDifference(source, root)
      if (difference !== undefined) throw new AmbiguousSyntax(difference)
      const hidden = hiddenBacktickScripts(root)
      if (hidden === undefined) throw syntaxError('a backquote (`) is never closed')
      for (const script of hidden) this.script(script)
      this.#visit(root, INHERITED)
      for (const expansion of defaultAssignments(root)) this.units.push(expansion)
      const risk = findArithmeticRisk(root)
      if (risk !== undefined)
        this.units.push({ type: 'construct', text: risk.text, risk: risk.reason })
    } finally {
      this.#depth -= 1
      tree.delete()
    }
  }

  #visit(node: Node, stdin: StandardInput): void {
    switch (node.type) {
      case 'comment':
        return
      case 'command':
        this.#command(node, stdin, [], node.text)
        return
      case 'redirected_statement':
      case 'function_definition':
        // A function's redirections (`f() { …; } > file`) are opened at every call of it.
        this.#redirected(node, stdin)
        return
      case 'pipeline':
        this.#pipeline(node.namedChildren, stdin, [])
        return
      case 'variable_assignment':
      case 'variable_assignments':
        this.#assignments(node)
        return
      case 'declaration_command':
      case 'unset_command':
        this.#declaration(node, stdin)
        return
      case 'for_statement': {
        // `for NAME in …` and `select NAME in …` set NAME like an assignment.
        const variable = node.childForFieldName('variable')
        if (variable !== null) {
          const assignments = [{ name: variable.text, value: undefined }]
          this.units.push({ type: 'assignment', text: `for ${variable.text}`, assignments })
        }
        for (const child of node.namedChildren) this.#visit(child, stdin)
        return
      }
      case 'test_command':
        if (node.child(0)?.type === '[') {
          this.#bracketTest(node, stdin)
          return
        }
        for (const child of node.namedChildren) this.#visit(child, INHERITED)
        this.units.push({ type: 'construct', text: node.text })
        return
      case 'command_substitution':
      case 'process_substitution':
        this.#substitution(node)
        return
      case 'file_redirect':
      case 'heredoc_redirect':
      case 'herestring_redirect': {
        // A redirection with no command (`$(>file)`) still opens its file: judged like `>file`.
        const reading = readRedirect(node, this.#read)
        this.units.push({ type: 'redirect', text: node.text, redirects: reading.redirects })
        this.#continuations(reading, [])
        return
      }
      default:
        for (const child of node.namedChildren) this.#visit(child, stdin)
    }
  }

  #command(node: Node, stdin: StandardInput, outer: readonly Node[], text: string): void {
    const assignments: Assignment[] = []
    const words: ShellWord[] = []
    const reading = emptyReading()
    const others: Node[] = []
    node.children.forEach((child, index) => {
      const field = node.fieldNameForChild(index)
      if (isLocaleDollar(child)) return
      if (field === 'name') words.push(readWord(soleChild(child), this.#read))
      else if (field === 'argument') words.push(readWord(child, this.#read))
      else if (child.type === 'variable_assignment') assignments.push(this.#assignment(child))
      else if (REDIRECT_TYPES.has(child.type))
        mergeReading(reading, readRedirect(child, this.#read))
      else if (child.isNamed) others.push(child)
    })
    for (const redirect of outer) mergeReading(reading, readRedirect(redirect, this.#read))
    words.push(...reading.extraWords)
    // `{NAME}<file` opens a descriptor and sets NAME to its number (for good, with a builtin).
    for (const word of words) {
      const name = /^\{([A-Za-z_][A-Za-z0-9_]*)\}$/.exec(word.value ?? '')?.[1]
      if (name !== undefined && new RegExp(`\\{${name}\\}[<>]`).test(text))
        assignments.push({ name, value: undefined })
    }
    const command: SimpleCommand = {
      text,
      assignments,
      words,
      redirects: reading.redirects,
      stdin: standardInput(reading, stdin),
    }
    this.units.push({ type: 'command', command })
    for (const other of others) this.#visit(other, INHERITED)
    this.#continuations(reading, [command])
  }

  #redirected(node: Node, stdin: StandardInput): void {
    const body = node.childForFieldName('body')
    const redirects = node.children.filter((child) => REDIRECT_TYPES.has(child.type))
    if (body?.type === 'command') {
      this.#command(body, stdin, redirects, node.text)
      return
    }
    const before = this.units.length
    if (body !== null) this.#visit(body, stdin)
    const bodyCommands = commandsIn(this.units.slice(before))
    const reading = emptyReading()
    for (const redirect of redirects) mergeReading(reading, readRedirect(redirect, this.#read))
    const extra = reading.extraWords[0]
    if (extra !== undefined) throw syntaxError(`unexpected word after a redirection: ${extra.text}`)
    this.units.push({ type: 'redirect', text: node.text, redirects: reading.redirects })
    this.#continuations(reading, bodyCommands)
  }

  /** What follows a here-document's first line: `| next` stages and `&& next` statements. */
  #continuations(reading: RedirectReading, upstream: readonly SimpleCommand[]): void {
    for (const pipeline of reading.pipelines)
      this.#pipeline(pipeline.namedChildren, INHERITED, upstream)
    for (const statement of reading.statements) this.#visit(statement, INHERITED)
  }

  #pipeline(stages: readonly Node[], stdin: StandardInput, upstream: readonly SimpleCommand[]) {
    let previous = upstream
    for (const stage of stages) {
      if (stage.type === 'comment') continue
      const stageInput: StandardInput =
        previous.length === 0 && upstream.length === 0
          ? stdin
          : { type: 'pipe', upstream: previous }
      const before = this.units.length
      this.#visit(stage, stageInput)
      previous = [...previous, ...commandsIn(this.units.slice(before))]
    }
  }

  #assignments(node: Node): void {
    const assignments: Assignment[] = []
    const visit = (child: Node): void => {
      if (child.type === 'variable_assignment') assignments.push(this.#assignment(child))
      else if (child.type === 'variable_assignments') child.namedChildren.forEach(visit)
      else if (child.isNamed) readWord(child, this.#read)
    }
    visit(node)
    this.units.push({ type: 'assignment', text: node.text, assignments })
  }

  /**
   * `declare`, `export`, `local`, `readonly`, `typeset` and `unset` are builtins like `read`:
   * they become a command whose words are the builtin's name, its options and its
   * `NAME[=value]` arguments, so that one rule judges every builtin that sets variables.
   */
  #declaration(node: Node, stdin: StandardInput): void {
    const keyword = node.child(0)?.text ?? ''
    const words: ShellWord[] = [literalWord(keyword)]
    for (const child of node.namedChildren) {
      if (child.type === 'variable_assignment') words.push(this.#assignmentWord(child))
      else words.push(readWord(child, this.#read))
    }
    const command: SimpleCommand = { text: node.text, assignments: [], words, redirects: [], stdin }
    this.units.push({ type: 'command', command })
  }

  /**
   * `[ … ]` is the builtin `[` with words, which the grammar parses as an expression; its
   * words are given back in order (`[`, operators and operands, `]`).
   */
  #bracketTest(node: Node, stdin: StandardInput): void {
    const words: ShellWord[] = []
    const collect = (parent: Node): void => {
      for (const child of parent.children) {
        if (TEST_EXPRESSIONS.has(child.type)) collect(child)
        else if (child.isNamed) words.push(readWord(child, this.#read))
        else words.push(literalWord(child.text))
      }
    }
    collect(node)
    const command: SimpleCommand = { text: node.text, assignments: [], words, redirects: [], stdin }
    this.units.push({ type: 'command', command })
  }

  /** `NAME=value` (or `NAME+=value`, `a[i]=value`) as one word, as `env` or `sudo` get it. */
  #assignmentWord(node: Node): ShellWord {
    const assignment = this.#assignment(node)
    const nameNode = node.childForFieldName('name')
    const valueNode = node.childForFieldName('value')
    const head = node.text.slice(0, (valueNode?.startIndex ?? node.endIndex) - node.startIndex)
    if (nameNode === null || assignment.value === undefined) return literalWord(head)
    // `a=(x y)` is an array the grammar has parsed: literal when its elements are.
    const elements = valueNode?.type === 'array' ? valueNode.namedChildren : undefined
    if (elements?.every((element) => readWord(element, this.#read).value !== undefined) === true)
      return { ...literalWord(node.text), text: node.text }
    const value = assignment.value.value
    if (value === undefined) return dynamicWord(node.text, head)
    return { ...literalWord(`${head}${value}`), text: node.text }
  }

  #assignment(node: Node): Assignment {
    const nameNode = node.childForFieldName('name')
    if (nameNode !== null && nameNode.type !== 'variable_name') readWord(nameNode, this.#read)
    // `a[2]=x` sets `a`; any other index is evaluated as arithmetic, which can run commands,
    // so the name is kept whole (`a[i]`) and is harmless to no rule.
    const index = nameNode?.childForFieldName('index')
    const plain = index === null || index === undefined || /^\d+$/.test(index.text)
    const name = plain
      ? (nameNode?.childForFieldName('name')?.text ?? nameNode?.text ?? '')
      : (nameNode?.text ?? '')
    const valueNode = node.childForFieldName('value')
    return { name, value: valueNode === null ? undefined : readWord(valueNode, this.#read) }
  }

  #substitution(node: Node): readonly SimpleCommand[] {
    const before = this.units.length
    if (node.text.startsWith('`')) this.script(backtickScript(node.text.slice(1, -1)))
    else for (const child of node.namedChildren) this.#visit(child, INHERITED)
    return commandsIn(this.units.slice(before))
  }
}

/** `command_name` wraps the word that names the command. */
function soleChild(node: Node): Node {
  const named = node.namedChildren
  return named.length === 1 && named[0] !== undefined ? named[0] : node
}

/** The last redirection of descriptor 0 decides; otherwise the pipe or the caller's input. */
function standardInput(reading: RedirectReading, inherited: StandardInput): StandardInput {
  let input = inherited
  for (const redirect of reading.redirects) {
    if (redirect.descriptor !== undefined && redirect.descriptor !== 0) continue
    if (redirect.body !== undefined) input = { type: 'document', body: redirect.body }
    else if (redirect.operator.startsWith('<')) input = { type: 'file', target: redirect.target }
  }
  return input
}

/**
 * `${NAME:=word}` and `${NAME=word}` anywhere in `root`: each sets NAME in the shell, as
 * `NAME=word` does (`: ${POSIXLY_CORRECT:=1}` turns on posix mode), so each is an assignment
 * unit. An indirect name (`${!x:=…}`) is only known at run time and keeps its `!`.
 */
function defaultAssignments(root: Node): ShellUnit[] {
  const units: ShellUnit[] = []
  const visit = (node: Node): void => {
    if (node.type === 'expansion') {
      const tokens = node.children
      if (tokens.some((token) => token.type === ':=' || token.type === '=')) {
        const indirect = tokens[1]?.type === '!' ? '!' : ''
        const target = tokens.find(
          (token) => token.type === 'variable_name' || token.type === 'subscript',
        )
        const variable =
          target?.type === 'subscript' ? target.childForFieldName('name') : (target ?? null)
        const name = `${indirect}${variable?.text ?? node.text}`
        units.push({
          type: 'assignment',
          text: node.text,
          assignments: [{ name, value: undefined }],
        })
      }
    }
    for (const child of node.children) visit(child)
  }
  visit(root)
  return units
}
