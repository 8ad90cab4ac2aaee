/**
 * @module access/command-policy/rules/read-only
 * Programs that only read run without a question, and only from a closed list (readers.ts):
 * the program by its bare name or from a system bin folder (`./cat` is whatever the workspace
 * put there), with every option on its list, spelled in full. An option that is not on the
 * list, an abbreviation (GNU programs and git accept `--out` for `--output`), or a word only
 * known at run time where an option could stand makes the command `jail`. Output redirections
 * are judged by the redirects rule, so `cat a > b` is not read-only.
 */
import { mostSevere, type CommandFinding } from '../command-judgement.ts'
import { READERS, type ReaderDefinition } from '../readers.ts'
import { resolveCommand, type ResolvedCommand } from '../resolve-command.ts'
import { scanOptions } from '../scan-options.ts'
import { dynamicWord, literalWord } from '../shell-syntax.ts'
import { quoted, type CommandRuleCheck, type RuleContext } from './rule.ts'
import { judgeTest } from './conditional-builtin.ts'

export const checkReadOnly: CommandRuleCheck = (command, context) => {
  if (!command.systemProgram) return []
  if (command.name === 'test' || command.name === '[') return judgeTest(command, context)
  const reader = READERS[command.name]
  if (reader === undefined) return []
  return [judgeReader(command, reader, context)]
}

function judgeReader(
  command: ResolvedCommand,
  reader: ReaderDefinition,
  context: RuleContext,
): CommandFinding {
  if (reader.anyArguments === true) return readOnly(command)
  const writes = reader.writes ?? []
  const scan = scanOptions(command.args, [...reader.reads, ...writes], {
    exactLong: true,
    globsMayBeOptions: true,
    numericOptions: reader.numericOptions === true,
  })
  const writing = scan.options.find((option) =>
    writes.some((definition) => definition.name === option.name),
  )
  if (writing !== undefined) {
    const programs = scan.options.flatMap((option) => {
      const program = option.value?.value
      return program !== undefined && reader.runs?.includes(option.name) === true
        ? [judgeProgram(command, program, context)]
        : []
    })
    const option = writing.name.length === 1 ? `-${writing.name}` : `--${writing.name}`
    const why = `${quoted(command)} writes a file or runs a program (${option})`
    return mostSevere([confined(command, why), ...programs]) ?? confined(command, why)
  }
  const unknown = scan.unknown[0]
  if (unknown !== undefined) {
    return confined(
      command,
      `${quoted(command)}: ${unknown} is not an option the policy knows to only read (an abbreviated option counts as unknown: spell it in full)`,
      'confined',
    )
  }
  const dynamic = scan.dynamic[0]
  if (dynamic !== undefined && reader.harmlessOptions !== true) {
    return confined(
      command,
      `${quoted(command)}: ${dynamic.text} could become an option that makes ${command.name} write a file or run a program`,
    )
  }
  const tooMany =
    reader.maxOperands !== undefined &&
    (scan.operands.length > reader.maxOperands ||
      scan.operands.some((word) => word.value === undefined || word.glob))
  if (tooMany) {
    return confined(command, `${quoted(command)} may write its last operand as a file`)
  }
  const prefix = reader.operandPrefix
  const setting = scan.operands.find(
    (word) => prefix !== undefined && word.value?.startsWith(prefix) !== true,
  )
  if (setting !== undefined) {
    return confined(
      command,
      `${quoted(command)}: ${setting.text} changes the system, not only reads`,
    )
  }
  return readOnly(command)
}

/** The program an option runs, judged as if run alone on a file only known at run time. */
function judgeProgram(
  command: ResolvedCommand,
  program: string,
  context: RuleContext,
): CommandFinding {
  const words = [literalWord(program), dynamicWord('(a file it reads)')]
  const resolution = resolveCommand({ ...command.source, assignments: [], words, redirects: [] })
  const finding =
    resolution.type === 'resolved'
      ? context.judgeCommand(resolution.command)
      : resolution.type === 'unclear'
        ? resolution.finding
        : undefined
  if (finding === undefined) return { verdict: 'jail', rule: 'confined', reason: '' }
  return { ...finding, reason: `${quoted(command)} runs ${program}: ${finding.reason}` }
}

function confined(
  command: ResolvedCommand,
  why: string,
  rule: 'writes-file' | 'confined' = 'writes-file',
): CommandFinding {
  return { verdict: 'jail', rule, reason: `${why}; it runs confined` }
}

function readOnly(command: ResolvedCommand): CommandFinding {
  return { verdict: 'allow', rule: 'read-only', reason: `${command.name} only reads` }
}
