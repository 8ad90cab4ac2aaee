/**
 * @module access/command-policy/rules/shell-code
 * Shell code inside a command is parsed again and judged like the command itself:
 * `bash -c '…'` (and sh, dash, zsh, …), a here-document or here-string fed to a shell,
 * `eval …`, `trap '…' EXIT`, `alias x='…'`. Code the policy cannot read is `ask`
 * (`bash -c "$X"`, `… | bash`), except `eval` or `source` of it, which is `deny`. Programs
 * that run a command given as a string (`watch`, `script -c`, `flock -c`) are in
 * program-runners.ts.
 *
 * The policy reads bash. Other shells read code otherwise (`sh` is often dash, which takes
 * `$'\'` as `$` and a quoted backslash, and `<<<` as a here-document), so their code is still
 * judged as bash, which finds what it can, but the command is at least `ask`, unless the shell
 * is a POSIX `sh` and the code keeps to plain syntax both read alike (`sh -c 'make && make
 * test'`); bash told to read code in another mode (`bash -O extglob -c`, `bash --posix -c`) is
 * refused.
 */
import type { CommandFinding } from '../command-judgement.ts'
import { SHELLS, STREAM_FILES } from '../programs.ts'
import type { ResolvedCommand } from '../resolve-command.ts'
import { changesParsing, parseModeFinding, variableChangesParsing } from '../parse-modes.ts'
import { readShellInvocation, shellOptions } from '../shell-invocation.ts'
import { isOneWord } from '../shell-syntax.ts'
import { dynamicEval, judged, unreadable } from './nested-code.ts'
import { quoted, type CommandRuleCheck, type RuleContext } from './rule.ts'

export const checkShellCode: CommandRuleCheck = (command, context) => {
  if (SHELLS.has(command.name)) return shellFindings(command, context)
  switch (command.name) {
    case 'eval':
      return evalFindings(command, context)
    case 'source':
    case '.':
      return sourceFindings(command)
    case 'trap':
      return trapFindings(command, context)
    case 'alias':
      return command.args.flatMap((word) => {
        const equals = word.value?.indexOf('=') ?? -1
        if (word.value === undefined) return [unreadable(command, word.text)]
        return equals === -1 ? [] : judged(context, word.value.slice(equals + 1))
      })
    case 'hash':
    case 'enable':
      return command.args.some((word) => /^-[a-z]*[pf]/.test(word.value ?? '-p'))
        ? [
            {
              verdict: 'ask',
              rule: 'dynamic-command',
              reason: `${quoted(command)} makes a name run another program, which the policy cannot follow; call the program by its own name`,
            },
          ]
        : []
    default:
      return []
  }
}

function shellFindings(command: ResolvedCommand, context: RuleContext): CommandFinding[] {
  const invocation = readShellInvocation(command.args)
  switch (invocation.type) {
    case 'unclear':
      return [unreadable(command, invocation.word.text)]
    case 'string':
      return invocation.script.value === undefined
        ? [unreadable(command, invocation.script.text)]
        : [
            ...judged(context, invocation.script.value),
            ...dialectFindings(command, invocation.script.value),
          ]
    case 'file':
      if (invocation.file.value === undefined) return [unreadable(command, invocation.file.text)]
      if (!STREAM_FILES.test(invocation.file.value)) return []
      return stdinFindings(command, context)
    case 'stdin':
      return stdinFindings(command, context)
  }
}

/** POSIX shells whose reading of the code in `PORTABLE_CODE` is bash's. */
const POSIX_SHELLS: ReadonlySet<string> = new Set(['sh', 'dash', 'ash'])

/**
 * Code that dash reads as bash does: ASCII without backslashes or backquotes (whose escapes
 * differ in detail), and none of bash's own syntax (`PORTABLE_EXCLUDED`).
 */
const PORTABLE_CODE = /^[A-Za-z0-9_ \t\n\-./,:=+%@~^'"$|;&<>()*?#![\]{}]*$/

/**
 * Bash syntax that dash reads otherwise: `$'…'` and `$"…"`, `<<<`, `&>`, `|&`, `;&`, `[[`,
 * `((`, process substitution, `${…}` beyond `${NAME}`, functions declared with `function`,
 * and aliases (which dash expands in scripts, so one word can become any text).
 */
const PORTABLE_EXCLUDED =
  /\$['"]|<<<|&>|\|&|;&|\[\[|(?<!\$)\(\(|[<>]\(|\$\{(?![A-Za-z_][A-Za-z0-9_]*\})|\b(?:function|alias)\b/

/**
 * Code judged as bash that another shell, or bash in another mode, will read: `sh -c` is
 * accepted when the code is in the part of the language both read alike, any other shell is
 * `ask`, and bash told to read otherwise (`--posix`, `-O extglob`, `POSIXLY_CORRECT=1`) is
 * refused.
 */
function dialectFindings(command: ResolvedCommand, code: string): CommandFinding[] {
  if (command.name !== 'bash') {
    if (POSIX_SHELLS.has(command.name) && PORTABLE_CODE.test(code) && !PORTABLE_EXCLUDED.test(code))
      return []
    return [
      {
        verdict: 'ask',
        rule: 'dynamic-code',
        reason: `${quoted(command)}: ${command.name} reads its code otherwise than bash, which is what the policy reads, so it could run commands the policy does not see; run the code with bash -c instead`,
      },
    ]
  }
  const variable = command.assignments.find(({ name }) => variableChangesParsing(name))
  if (variable !== undefined) return [parseModeFinding(`${quoted(command)}: ${variable.name}`)]
  const options = shellOptions(command.args)
  const index = options.findIndex((name) => name === undefined || changesParsing(name))
  if (index === -1) return []
  return [
    parseModeFinding(`${quoted(command)}: ${options[index] ?? 'an option known only at run time'}`),
  ]
}

/** A shell that reads its program from standard input: the input is the program. */
function stdinFindings(command: ResolvedCommand, context: RuleContext): CommandFinding[] {
  const stdin = command.source.stdin
  if (stdin.type === 'document') {
    return stdin.body.value === undefined
      ? [unreadable(command, 'a here-document with expansions')]
      : [...judged(context, stdin.body.value), ...dialectFindings(command, stdin.body.value)]
  }
  if (stdin.type === 'file' && stdin.target?.value === undefined)
    return [unreadable(command, stdin.target?.text ?? 'its input')]
  return stdin.type === 'pipe' ? [unreadable(command, 'the pipe before it')] : []
}

function evalFindings(command: ResolvedCommand, context: RuleContext): CommandFinding[] {
  // eval joins its words with blanks: a word the shell makes several of is code unread too.
  const dynamic = command.args.find((word) => word.value === undefined || !isOneWord(word))
  if (dynamic !== undefined) return [dynamicEval(command, dynamic.text)]
  if (command.args.length === 0) return []
  return judged(context, command.args.map((word) => word.value).join(' '))
}

function sourceFindings(command: ResolvedCommand): CommandFinding[] {
  const file = command.args[0]
  if (file === undefined) return []
  if (file.value === undefined || file.glob || STREAM_FILES.test(file.value))
    return [dynamicEval(command, file.text)]
  return []
}

function trapFindings(command: ResolvedCommand, context: RuleContext): CommandFinding[] {
  const first = command.args[0]?.value === '--' ? command.args[1] : command.args[0]
  if (first === undefined) return []
  if (first.value === undefined || !isOneWord(first)) return [unreadable(command, first.text)]
  if (first.value.startsWith('-') || command.args.length < 2) return []
  return judged(context, first.value)
}
