/**
 * @module access/command-policy/rules/variables
 * Builtins that set variables are judged like assignments: `read X`, `mapfile X`,
 * `printf -v X`, `getopts o X`, `wait -p X`, `let X=1`, `declare`/`typeset`/`local`/
 * `export`/`readonly X=1` and `unset X` keep a command in `allow` only when every name they
 * set is harmless (environment.ts). Otherwise the command is `jail`: `printf -v GIT_CONFIG_KEY_0
 * core.pager x; git status` would make git run a pager of the agent's choosing.
 *
 * Bash evaluates an array index as arithmetic, and arithmetic expands `$(…)`, so a name such
 * as `a[$(id)]` runs a command (`read 'a[$(id)]'`, `test -v 'a[$(id)]'`): its code is judged,
 * and any name with an index other than digits, or only known at run time, is `jail`. So are
 * `declare -n` (a name that stands for another variable), `declare -i` (every later value is
 * evaluated as arithmetic), `mapfile -C` (runs code per line) and `set`/`shopt` options off a
 * short list.
 */
import type { CommandFinding } from '../command-judgement.ts'
import { changesParsing, parseModeFinding } from '../parse-modes.ts'
import type { ResolvedCommand } from '../resolve-command.ts'
import { couldBecomeOption } from '../scan-options.ts'
import { isOneWord, type ShellWord } from '../shell-syntax.ts'
import { shellVariableFinding } from './environment-changes.ts'
import { quoted, type CommandRuleCheck, type RuleContext } from './rule.ts'

/** How a builtin reads its options: letters that are flags, letters that take a value. */
interface BuiltinOptions {
  readonly flags: string
  readonly valued: string
}

/** A builtin's options and operands, read as bash's internal getopt does. */
interface BuiltinScan {
  readonly options: readonly { readonly letter: string; readonly value: ShellWord | undefined }[]
  readonly operands: readonly ShellWord[]
  /** A word that is not literal where an option could stand, or an unknown letter. */
  readonly unclear: string | undefined
}

const NAME = /^([A-Za-z_][A-Za-z0-9_]*)(?:\[(.*)\])?$/s

export const checkVariables: CommandRuleCheck = (command, context) => {
  const judge = JUDGES[command.name]
  if (judge === undefined || !command.systemProgram) return []
  const findings = judge(command, context)
  return findings.length > 0 ? findings : [sets(command)]
}

type Judge = (command: ResolvedCommand, context: RuleContext) => CommandFinding[]

/** `declare`-like builtins; with `printOnly`, `-p` only prints (for `export` it does not). */
const declaration =
  (flags: string, printOnly = false): Judge =>
  (command, context) => {
    const scan = scanBuiltin(command.args, { flags, valued: '' }, true)
    if (scan.unclear !== undefined) return [unclear(command, scan.unclear)]
    const letters = scan.options.map((option) => option.letter)
    if (letters.includes('n'))
      return [unclear(command, '-n makes a name stand for another variable')]
    if (letters.includes('i'))
      return [
        unclear(command, '-i evaluates every later value as arithmetic, which can run commands'),
      ]
    // With -f the names are functions, whose bodies are judged where they are defined; with
    // -p the builtin only prints.
    if (letters.includes('f') || (printOnly && letters.includes('p'))) return []
    return scan.operands.flatMap((word) => assignmentFindings(command, word, context))
  }

const JUDGES: Readonly<Record<string, Judge>> = {
  declare: declaration('aAfFgiIlnprtux', true),
  typeset: declaration('aAfFgiIlnprtux', true),
  local: declaration('aAfFgiIlnprtux'),
  export: declaration('fnp'),
  readonly: declaration('aAfp'),
  read: (command, context) => {
    const scan = scanBuiltin(command.args, { flags: 'ers', valued: 'adinNptu' }, false)
    if (scan.unclear !== undefined) return [unclear(command, scan.unclear)]
    const array = scan.options.filter((option) => option.letter === 'a')
    return [...array.map((option) => option.value), ...scan.operands].flatMap((word) =>
      nameFindings(command, word, context),
    )
  },
  mapfile: arrayReader,
  readarray: arrayReader,
  printf: (command, context) => {
    const first = command.args[0]
    if (
      first !== undefined &&
      couldBecomeOption(first) &&
      (command.args.length > 1 || first.glob)
    ) {
      return [unclear(command, `${first.text} could be -v, which sets a variable`)]
    }
    const scan = scanBuiltin(command.args, { flags: '', valued: 'v' }, false)
    if (scan.unclear !== undefined) return [unclear(command, scan.unclear)]
    return scan.options.flatMap((option) => nameFindings(command, option.value, context))
  },
  getopts: (command, context) => {
    const name = command.args[1]
    if (command.args[0]?.value === undefined) return [unclear(command, 'its arguments')]
    return name === undefined ? [] : nameFindings(command, name, context)
  },
  wait: (command, context) => {
    const scan = scanBuiltin(command.args, { flags: 'fn', valued: 'p' }, false)
    if (scan.unclear !== undefined) return [unclear(command, scan.unclear)]
    return scan.options.flatMap((option) => nameFindings(command, option.value, context))
  },
  let: (command, context) =>
    command.args.flatMap((word) => arithmeticFindings(command, word, context)),
  unset: (command, context) => {
    const scan = scanBuiltin(command.args, { flags: 'fvn', valued: '' }, false)
    if (scan.unclear !== undefined) return [unclear(command, scan.unclear)]
    if (scan.options.some((option) => option.letter === 'f')) return []
    return scan.operands.flatMap((word) => nameFindings(command, word, context))
  },
  set: (command) => shellOptionFindings(command),
  shopt: (command) => shoptFindings(command),
}

/** `mapfile [-C callback] [array]`: the callback is code, run with the line's number and text. */
function arrayReader(command: ResolvedCommand, context: RuleContext): CommandFinding[] {
  const scan = scanBuiltin(command.args, { flags: 't', valued: 'dnOsuCc' }, false)
  if (scan.unclear !== undefined) return [unclear(command, scan.unclear)]
  const findings = scan.operands.flatMap((word) => nameFindings(command, word, context))
  const callback = scan.options.find((option) => option.letter === 'C')?.value
  if (callback !== undefined) {
    if (callback.value !== undefined) context.judgeScript(`${callback.value} 0 "$line"`)
    findings.push(unclear(command, `-C ${callback.text} runs code for every line it reads`))
  }
  return findings
}

/** Reads a builtin's words: short options (bundled, `--` ends them), then operands. */
function scanBuiltin(
  args: readonly ShellWord[],
  definitions: BuiltinOptions,
  plusToo: boolean,
): BuiltinScan {
  const options: { letter: string; value: ShellWord | undefined }[] = []
  let index = 0
  for (; index < args.length; index += 1) {
    const word = args[index] as ShellWord
    const text = word.value
    if (text === undefined) {
      // `x="$v"` or `x$i` starts with a letter: an operand, never an option.
      if (/^[A-Za-z_]/.test(word.staticPrefix)) break
      return { options, operands: [], unclear: `${word.text} could be any option` }
    }
    if (text === '--') {
      index += 1
      break
    }
    const signed = text.startsWith('-') || (plusToo && text.startsWith('+'))
    if (!signed || text.length < 2) break
    for (let position = 1; position < text.length; position += 1) {
      const letter = text[position] as string
      if (definitions.valued.includes(letter)) {
        const rest = text.slice(position + 1)
        const value = rest === '' ? args[++index] : { ...word, text: rest, value: rest }
        options.push({ letter, value })
        break
      }
      if (!definitions.flags.includes(letter)) {
        return {
          options,
          operands: [],
          unclear: `-${letter} is an option the policy does not read`,
        }
      }
      options.push({ letter, value: undefined })
    }
  }
  return { options, operands: args.slice(index), unclear: undefined }
}

/** `NAME`, `NAME=value` or `NAME+=value` given to `declare` and its kind. */
function assignmentFindings(
  command: ResolvedCommand,
  word: ShellWord,
  context: RuleContext,
): CommandFinding[] {
  const text = word.value ?? word.staticPrefix
  const equals = /\+?=/.exec(text)
  if (equals === null) return nameFindings(command, word, context)
  const name = { ...word, text: text.slice(0, equals.index), value: text.slice(0, equals.index) }
  const findings = nameFindings(command, name, context)
  // `declare -a a='([$(id)]=1)'`: a quoted compound value is parsed again, indexes and all, and
  // so is any value only known at run time when the variable is (or was made) an array. An
  // array written out (`a=(1 2)`) was read by the grammar like any other words.
  const value = word.value?.slice(equals.index + equals[0].length)
  const writtenArray = word.text.slice(equals.index + equals[0].length).startsWith('(')
  if (value === undefined || (value.startsWith('(') && !writtenArray)) {
    findings.push(
      unclear(command, `the value of ${name.text} may be read as an array with indexes`),
    )
  }
  return findings
}

/** The finding for one variable name a builtin sets. */
function nameFindings(
  command: ResolvedCommand,
  word: ShellWord | undefined,
  context: RuleContext,
): CommandFinding[] {
  if (word === undefined) return []
  if (word.value === undefined) {
    return [unclear(command, `the name ${word.text} is only known when it runs`)]
  }
  const match = NAME.exec(word.value)
  if (match === null) return [unclear(command, `${word.text} is not a plain variable name`)]
  const name = match[1] as string
  const index = match[2]
  if (index === undefined || /^\d+$/.test(index)) {
    const finding = shellVariableFinding(name)
    return finding === undefined ? [] : [finding]
  }
  judgeArithmeticCode(index, context)
  return [
    unclear(
      command,
      `the index of ${word.text} is evaluated as arithmetic, which can run commands`,
    ),
  ]
}

/**
 * One `let` expression. Arithmetic reads the value of every name in it (`let n++`, `let x=y`)
 * and evaluates that value too, so only a number given to a harmless name is `allow`.
 */
function arithmeticFindings(
  command: ResolvedCommand,
  word: ShellWord,
  context: RuleContext,
): CommandFinding[] {
  const text = word.value
  if (text === undefined || word.glob) {
    return [unclear(command, `${word.text} is only known when it runs`)]
  }
  const assignment = /^([A-Za-z_][A-Za-z0-9_]*)=[\d\s+\-*/%()]*$/.exec(text)
  if (assignment !== null) {
    const finding = shellVariableFinding(assignment[1] as string)
    return finding === undefined ? [] : [finding]
  }
  judgeArithmeticCode(text, context)
  return [unclear(command, `${text} evaluates variables as arithmetic, which can run commands`)]
}

/** Code in an arithmetic text (`$(…)`, backquotes) is judged like any other command. */
export function judgeArithmeticCode(text: string, context: RuleContext): void {
  if (/\$\(|`/.test(text)) context.judgeScript(`: ${text}`)
}

/** `set` options that only make the shell stricter or louder; `--` sets positional words. */
const SAFE_SET_LETTERS = 'euxvfCbhmnBH'
const SAFE_SET_NAMES = new Set([
  ...['errexit', 'nounset', 'xtrace', 'verbose', 'noglob', 'noclobber', 'pipefail'],
  ...['notify', 'hashall', 'braceexpand', 'noexec', 'monitor', 'histexpand', 'errtrace'],
])

function shellOptionFindings(command: ResolvedCommand): CommandFinding[] {
  const args = command.args
  for (let index = 0; index < args.length; index += 1) {
    const word = args[index] as ShellWord
    const text = word.value
    // A word only known at run time, or one the shell makes several words of (`{-o,} posix`),
    // could be `-o posix`.
    if (!isOneWord(word))
      return [parseModeFinding(`${quoted(command)} (${word.text} could be any option)`)]
    if (text === undefined || text === '--' || text === '-' || !/^[-+]/.test(text)) return []
    // `set -o` alone lists the options; a name only known at run time could be `posix`.
    const next = args[index + 1]
    const parsingMode =
      next !== undefined &&
      (next.value === undefined || !isOneWord(next) || changesParsing(next.value))
    if (text === '-o' && parsingMode) return [parseModeFinding(quoted(command))]
    if (text === '-o' || text === '+o') {
      const name = args[index + 1]?.value
      if (name !== undefined && !SAFE_SET_NAMES.has(name)) {
        return [unclear(command, `${text} ${name} changes how the shell runs later commands`)]
      }
      index += 1
      continue
    }
    const letters = text.slice(1).replaceAll('o', '')
    const unsafe = [...letters].find((letter) => !SAFE_SET_LETTERS.includes(letter))
    if (unsafe !== undefined) {
      return [unclear(command, `${text[0]}${unsafe} changes how the shell runs later commands`)]
    }
    if (text.includes('o')) {
      const name = args[index + 1]?.value
      if (text.startsWith('-') && parsingMode) return [parseModeFinding(quoted(command))]
      if (name !== undefined && !SAFE_SET_NAMES.has(name)) {
        return [unclear(command, `-o ${name} changes how the shell runs later commands`)]
      }
      index += 1
    }
  }
  return []
}

/** `shopt` options that only change how globs and patterns match. */
const SAFE_SHOPT = new Set([
  ...['extglob', 'globstar', 'nullglob', 'dotglob', 'nocaseglob', 'nocasematch', 'failglob'],
  ...['lastpipe', 'inherit_errexit', 'globasciiranges'],
])

function shoptFindings(command: ResolvedCommand): CommandFinding[] {
  const words = command.args
  const dynamic = words.find((word) => word.value === undefined || !isOneWord(word))
  // A name only known at run time could turn on expand_aliases.
  if (dynamic !== undefined)
    return [parseModeFinding(`${quoted(command)} (an option only known at run time)`)]
  const values = words.map((word) => word.value as string)
  const setting = values.some((value) => /^-[a-z]*[su]/.test(value))
  if (!setting) return []
  const viaSet = values.some((value) => /^-[a-z]*o/.test(value))
  const names = values.filter((value) => !value.startsWith('-'))
  const turnsOn = values.some((value) => /^-[a-z]*s/.test(value))
  const parsing = names.find(changesParsing)
  if (turnsOn && parsing !== undefined) return [parseModeFinding(`${quoted(command)}: ${parsing}`)]
  const unsafe = names.find((name) => (viaSet ? !SAFE_SET_NAMES.has(name) : !SAFE_SHOPT.has(name)))
  return unsafe === undefined
    ? []
    : [unclear(command, `shopt ${unsafe} changes how the shell runs later commands`)]
}

function unclear(command: ResolvedCommand, why: string): CommandFinding {
  return {
    verdict: 'jail',
    rule: 'environment',
    reason: `${quoted(command)}: ${why}; the command runs confined`,
  }
}

function sets(command: ResolvedCommand): CommandFinding {
  return {
    verdict: 'allow',
    rule: 'read-only',
    reason: `${command.name} only sets shell variables no program obeys`,
  }
}
