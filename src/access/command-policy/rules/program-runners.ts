/**
 * @module access/command-policy/rules/program-runners
 * Programs that run a command given to them as a string or as words: `watch '…'` (through
 * `sh -c`, or `watch -x` as words), `script -c '…'`, `flock FILE -c '…'` and
 * `flock FILE COMMAND…`. The command is judged as if written alone; the runner itself is
 * `jail` at least (it repeats the command, or writes a file).
 */
import type { CommandFinding } from '../command-judgement.ts'
import { resolveCommand, type ResolvedCommand } from '../resolve-command.ts'
import { scanOptions, type OptionDefinition } from '../scan-options.ts'
import { isOneWord, type ShellWord } from '../shell-syntax.ts'
import { optionTable } from '../option-table.ts'
import { judged, unreadable } from './nested-code.ts'
import { quoted, type CommandRuleCheck, type RuleContext } from './rule.ts'

const WATCH_OPTIONS: readonly OptionDefinition[] = [
  { name: 'interval', short: 'n', long: 'interval', value: 'required' },
  { name: 'differences', short: 'd', long: 'differences', value: 'attached' },
  { name: 'exec', short: 'x', long: 'exec' },
  ...['b', 'c', 'C', 'e', 'g', 'p', 'r', 't', 'w'].map((letter) => ({
    name: letter,
    short: letter,
  })),
  { name: 'equexit', short: 'q', long: 'equexit', value: 'required' },
]

/** What each runner does besides running the command, which keeps it out of `allow`. */
const SIDE_EFFECTS: Readonly<Record<string, string>> = {
  watch: 'watch runs the command again and again until it is stopped',
  script: 'script writes a typescript file of the session',
  flock: 'flock creates its lock file',
}

export const checkProgramRunners: CommandRuleCheck = (command, context) => {
  const effect = SIDE_EFFECTS[command.name]
  if (effect === undefined) return []
  const runner: CommandFinding = {
    verdict: 'jail',
    rule: 'confined',
    reason: `${effect}; it runs confined`,
  }
  switch (command.name) {
    case 'watch':
      return [runner, ...watchFindings(command, context)]
    case 'script':
      return [runner, ...scriptFindings(command, context)]
    default:
      return [runner, ...flockFindings(command, context)]
  }
}

function watchFindings(command: ResolvedCommand, context: RuleContext): CommandFinding[] {
  const scan = scanOptions(command.args, WATCH_OPTIONS, { stopAtOperand: true })
  const words = command.args.slice(scan.end)
  if (scan.options.some((option) => option.name === 'exec')) {
    return judgeWords(command, words, context)
  }
  const dynamic = words.find((word: ShellWord) => word.value === undefined)
  if (dynamic !== undefined) return [unreadable(command, dynamic.text)]
  return words.length === 0 ? [] : judged(context, words.map((word) => word.value).join(' '))
}

/** `script -c '…'` runs its `-c` string with a shell. */
function scriptFindings(command: ResolvedCommand, context: RuleContext): CommandFinding[] {
  const definitions: OptionDefinition[] = [
    { name: 'command', short: 'c', long: 'command', value: 'required' },
    ...['E', 'T', 'B', 'I', 'O', 'o'].map((letter) => ({
      name: letter,
      short: letter,
      value: 'required' as const,
    })),
  ]
  const code = scanOptions(command.args, definitions).options.find(
    (option) => option.name === 'command',
  )?.value
  if (code === undefined) return []
  return code.value === undefined ? [unreadable(command, code.text)] : judged(context, code.value)
}

/**
 * flock's options (util-linux 2.38), long names too: an option the table did not know that
 * takes a value (`--timeout 5`) would put the lock file, and so the command, a word off.
 */
const FLOCK_OPTIONS = optionTable(
  's|shared x|exclusive e n|nonblock nb o|close F|no-fork u|unlock w|timeout= E|conflict-exit-code= verbose fcntl h|help V|version',
)

/** `flock [options] FILE -c '…'` or `flock [options] FILE COMMAND…`. */
function flockFindings(command: ResolvedCommand, context: RuleContext): CommandFinding[] {
  const scan = scanOptions(command.args, FLOCK_OPTIONS, { stopAtOperand: true })
  const unknown = scan.unknown[0]
  if (unknown !== undefined) {
    return [
      unclearRunner(
        command,
        `${unknown} is an option the policy does not read`,
        'spell it in full',
      ),
    ]
  }
  // A value or lock file the shell makes several words of, or none (`flock {lock,git} clean
  // -f` is `flock lock git clean -f`), moves where the command starts.
  const lockFile = command.args[scan.end]
  const split = [...scan.dynamic, ...(lockFile === undefined ? [] : [lockFile])].find(
    (word) => !isOneWord(word),
  )
  if (split !== undefined) {
    return [
      unclearRunner(
        command,
        `the shell may make several words of ${split.text}, or none`,
        'quote it',
      ),
    ]
  }
  const after = command.args.slice(scan.end + 1)
  if (after[0]?.value === '-c' || after[0]?.value === '--command') {
    const code = after[1]
    if (code === undefined) return []
    return code.value === undefined ? [unreadable(command, code.text)] : judged(context, code.value)
  }
  if (after.length === 0) return []
  const resolution = resolveCommand({
    ...command.source,
    assignments: [],
    words: after,
    redirects: [],
  })
  if (resolution.type === 'unclear') return [resolution.finding]
  return resolution.type === 'none' ? [] : [context.judgeCommand(resolution.command)]
}

function unclearRunner(command: ResolvedCommand, why: string, fix: string): CommandFinding {
  return {
    verdict: 'ask',
    rule: 'unclear-command',
    reason: `${quoted(command)}: ${why}, so the policy cannot tell which program ${command.name} runs; ${fix}`,
  }
}

/** Judges `words` as a command of their own. */
function judgeWords(
  command: ResolvedCommand,
  words: readonly ShellWord[],
  context: RuleContext,
): CommandFinding[] {
  const resolution = resolveCommand({ ...command.source, assignments: [], words, redirects: [] })
  if (resolution.type === 'unclear') return [resolution.finding]
  return resolution.type === 'none' ? [] : [context.judgeCommand(resolution.command)]
}
