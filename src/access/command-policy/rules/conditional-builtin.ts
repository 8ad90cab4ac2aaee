/**
 * @module access/command-policy/rules/conditional-builtin
 * `test` and `[` only compare, except `-v NAME` and `-R NAME`: bash evaluates an index in the
 * name as arithmetic, which expands `$(…)` (`test -v 'a[$(id)]'` runs `id`). A name with an
 * index, or an operator or name only known at run time, makes the command `jail`.
 */
import type { CommandFinding } from '../command-judgement.ts'
import type { ResolvedCommand } from '../resolve-command.ts'
import { couldBecomeOption } from '../scan-options.ts'
import type { ShellWord } from '../shell-syntax.ts'
import { quoted, type RuleContext } from './rule.ts'
import { judgeArithmeticCode } from './variables.ts'

const NAME_OPERATORS = new Set(['-v', '-R'])

/** Findings for `test …` or `[ … ]`. */
export function judgeTest(command: ResolvedCommand, context: RuleContext): CommandFinding[] {
  const args =
    command.name === '[' && command.args.at(-1)?.value === ']'
      ? command.args.slice(0, -1)
      : command.args
  // A glob can expand to an operator and a name at once (files `-v` and `a[$(id)]`).
  const glob = args.find((word) => word.glob)
  if (glob !== undefined) return [evaluates(command, glob.text)]
  for (let index = 0; index + 1 < args.length; index += 1) {
    const word = args[index] as ShellWord
    const operand = args[index + 1] as ShellWord
    const namesVariable =
      couldBecomeOption(word) || (word.value !== undefined && NAME_OPERATORS.has(word.value))
    if (!namesVariable) continue
    const name = operand.value
    if (name === undefined || operand.glob) {
      return [evaluates(command, `${word.text} ${operand.text}`)]
    }
    const subscript = /\[(.*)\]$/s.exec(name)?.[1]
    if (subscript !== undefined && !/^\d+$/.test(subscript)) {
      judgeArithmeticCode(subscript, context)
      return [evaluates(command, `${word.text} ${operand.text}`)]
    }
  }
  return [{ verdict: 'allow', rule: 'read-only', reason: `${command.name} only compares` }]
}

function evaluates(command: ResolvedCommand, what: string): CommandFinding {
  return {
    verdict: 'jail',
    rule: 'environment',
    reason: `${quoted(command)}: ${what} may test a variable whose index is evaluated as arithmetic, which can run commands; it runs confined`,
  }
}
