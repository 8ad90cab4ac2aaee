/**
 * @module access/command-policy/rules/git
 * git, split in three: global options that point git at another repository or configuration
 * (`-C`, `--git-dir`, `--work-tree`, `-c`, `--config-env`, `--exec-path=`) are denied; then the
 * subcommand decides (see git-subcommands.ts for the table). An argument only known at run
 * time makes git `ask` at least, since it could be any option.
 */
import type { CommandFinding } from '../command-judgement.ts'
import type { ShellWord } from '../shell-syntax.ts'
import { judgeGitSubcommand } from './git-subcommands.ts'
import { quoted, type CommandRuleCheck } from './rule.ts'

/** Global options that make git use another repository, work tree, configuration or program. */
const OUTSIDE_OPTIONS = ['-C', '-c', '--git-dir', '--work-tree', '--config-env', '--super-prefix']

/** Global options that change nothing the policy cares about. */
const HARMLESS_OPTIONS = new Set([
  ...['--no-pager', '-P', '-p', '--paginate', '--no-replace-objects', '--literal-pathspecs'],
  ...['--glob-pathspecs', '--noglob-pathspecs', '--icase-pathspecs', '--no-optional-locks'],
  ...['--bare', '--version', '-v', '--help', '-h', '--html-path', '--man-path', '--info-path'],
  ...['--exec-path', '--no-lazy-fetch', '--no-advice'],
])
const HARMLESS_WITH_VALUE = ['--namespace=', '--list-cmds=', '--attr-source=']

/** Variables that point git at another repository, configuration or program. */
const OUTSIDE_VARIABLES =
  /^GIT_(DIR|WORK_TREE|COMMON_DIR|INDEX_FILE|OBJECT_DIRECTORY|ALTERNATE_OBJECT_DIRECTORIES|CONFIG.*|EXEC_PATH|NAMESPACE|SSH.*|PROXY_COMMAND|EXTERNAL_DIFF|ASKPASS)$/

export const checkGit: CommandRuleCheck = (command) => {
  if (command.name !== 'git') return []
  const variable = command.assignments.find((assignment) => OUTSIDE_VARIABLES.test(assignment.name))
  if (variable !== undefined) {
    return [
      {
        verdict: 'deny',
        rule: 'git-outside-workspace',
        reason: `${variable.name} points git at another repository, configuration or program and is never allowed; run git in the workspace without it`,
      },
    ]
  }
  const args = command.args
  let index = 0
  for (; index < args.length; index += 1) {
    const word = args[index] as ShellWord
    const value = word.value
    if (value === undefined) return [dynamic(quoted(command), word)]
    if (!value.startsWith('-')) break
    const outside = OUTSIDE_OPTIONS.find((option) => value === option || value.startsWith(option))
    if (outside !== undefined || value.startsWith('--exec-path=')) {
      return [
        {
          verdict: 'deny',
          rule: 'git-outside-workspace',
          reason: `git ${outside ?? '--exec-path'} points git at another repository, configuration or program and is never allowed; run git in the workspace without it`,
        },
      ]
    }
    if (HARMLESS_OPTIONS.has(value) || HARMLESS_WITH_VALUE.some((o) => value.startsWith(o)))
      continue
    return [
      {
        verdict: 'ask',
        rule: 'unclear-command',
        reason: `git ${value} is an option the policy does not read; drop it or put it after the subcommand`,
      },
    ]
  }
  const subcommand = args[index]
  if (subcommand === undefined)
    return [{ verdict: 'allow', rule: 'read-only', reason: 'git only prints' }]
  const rest = args.slice(index + 1)
  const findings = [...judgeGitSubcommand(subcommand.value as string, rest)]
  const unknown = rest.find((word) => word.value === undefined)
  if (unknown !== undefined) findings.push(dynamic(quoted(command), unknown))
  return findings
}

function dynamic(command: string, word: ShellWord): CommandFinding {
  return {
    verdict: 'ask',
    rule: 'dynamic-argument',
    reason: `${command}: ${word.text} is only known when it runs and could be any git option; write it literally`,
  }
}
