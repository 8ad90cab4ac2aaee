/**
 * @module access/command-policy/rules/read-only
 * Programs that only read: they run without asking. A program qualifies only by its bare name
 * or from a system bin folder (`./cat` is whatever the workspace put there), and only without
 * the options that make it write a file or run another program. Output redirections are judged
 * by the redirects rule, so `cat a > b` is not read-only.
 */
import type { CommandFinding } from '../command-judgement.ts'
import { scanOptions, type OptionDefinition } from '../scan-options.ts'
import type { ResolvedCommand } from '../resolve-command.ts'
import { quoted, type CommandRuleCheck } from './rule.ts'

/** Read-only whatever their arguments. */
const PURE_READERS = new Set([
  ...['cat', 'ls', 'grep', 'egrep', 'fgrep', 'head', 'tail', 'wc', 'diff', 'jq', 'cut', 'tr'],
  ...['echo', 'printf', 'pwd', 'stat', 'du', 'df', 'realpath', 'readlink', 'basename'],
  ...['dirname', 'which', 'type', 'whoami', 'id', 'uname', 'seq', 'nl', 'rev', 'tac', 'cmp'],
  ...['comm', 'true', 'false', 'test', '[', ':', 'printenv', 'env', 'cd', 'pushd', 'popd'],
  'read',
])

/**
 * Read-only unless given one of these options (they write a file or run a program). An
 * argument only known at run time could be one of them, so it makes the command `jail`.
 */
const CHECKED_READERS: Readonly<Record<string, readonly OptionDefinition[]>> = {
  sort: [
    { name: 'output', short: 'o', long: 'output', value: 'required' },
    { name: 'compress-program', long: 'compress-program', value: 'required' },
  ],
  tree: [
    { name: 'output', short: 'o', value: 'required' },
    { name: 'html', short: 'H', value: 'required' },
    { name: 'recursive-html', short: 'R' },
  ],
  date: [{ name: 'set', short: 's', long: 'set', value: 'required' }],
  rg: [{ name: 'pre', long: 'pre', value: 'required' }],
  file: [{ name: 'compile', short: 'C', long: 'compile' }],
  uniq: [],
}

/** `find` is read-only without these actions (the find rule judges them). */
export const FIND_ACTIONS = new Set([
  '-exec',
  '-execdir',
  '-ok',
  '-okdir',
  '-delete',
  '-fprint',
  '-fprint0',
  '-fprintf',
  '-fls',
])

export const checkReadOnly: CommandRuleCheck = (command) => {
  if (!command.systemProgram) return []
  if (command.name === 'command') return [allow(command)]
  if (PURE_READERS.has(command.name)) return [allow(command)]
  const writing = CHECKED_READERS[command.name]
  if (writing === undefined) return []
  if (command.args.some((word) => word.value === undefined)) {
    return [
      {
        verdict: 'jail',
        rule: 'writes-file',
        reason: `${quoted(command)}: an argument only known when it runs could make ${command.name} write a file; it runs confined`,
      },
    ]
  }
  const scan = scanOptions(command.args, writing)
  const writes = scan.options.length > 0 || (command.name === 'uniq' && scan.operands.length > 1)
  return writes
    ? [
        {
          verdict: 'jail',
          rule: 'writes-file',
          reason: `${quoted(command)} writes a file or runs a program; it runs confined`,
        },
      ]
    : [allow(command)]
}

function allow(command: ResolvedCommand): CommandFinding {
  return { verdict: 'allow', rule: 'read-only', reason: `${command.name} only reads` }
}
