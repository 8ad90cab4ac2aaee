/**
 * @module access/command-policy/rules/git
 * git, split in three: global options that point git at another repository or configuration
 * (`-C`, `--git-dir`, `--work-tree`, `-c`, `--config-env`, `--exec-path=`) are denied; the
 * others keep `allow` only from a short list (`--no-pager`, `-P`, the pathspec switches, …):
 * `-p`/`--paginate` runs a pager, so it is `jail`. git stops reading options at `-h`, `--help`,
 * `-v` and `--version` and runs `git help` (man) or `git version` with the words after them,
 * so those words are judged as that subcommand's, never as another. Then the subcommand
 * decides (see git-subcommands.ts). An argument only known at run time makes git
 * `ask` at least, since it could be any option.
 */
import type { CommandFinding } from '../command-judgement.ts'
import { couldBecomeOption } from '../scan-options.ts'
import type { ShellWord } from '../shell-syntax.ts'
import { COMMIT_IDENTITY, judgeGitSubcommand } from './git-subcommands.ts'
import { quoted, type CommandRuleCheck } from './rule.ts'

/** Global options that make git use another repository, work tree, configuration or program. */
const OUTSIDE_OPTIONS = ['-C', '-c', '--git-dir', '--work-tree', '--config-env', '--super-prefix']

/** Global options that change nothing but what git prints or how it matches paths. */
const READ_ONLY_OPTIONS = new Set([
  ...['--no-pager', '-P', '--no-replace-objects', '--literal-pathspecs', '--glob-pathspecs'],
  ...['--noglob-pathspecs', '--icase-pathspecs', '--no-optional-locks'],
  ...['--html-path', '--man-path', '--info-path', '--exec-path'],
])
/**
 * Global options at which git stops reading options and runs a subcommand of its own with the
 * words after them: `git -h log` is `git help log` (man, and what the configuration names for
 * help), `git -v --build-options` is `git version --build-options`.
 */
const STOPPING_OPTIONS: Readonly<Record<string, 'help' | 'version'>> = {
  '-h': 'help',
  '--help': 'help',
  '-v': 'version',
  '--version': 'version',
}
/** Global options git knows that do more than read (a pager, man) or that the list leaves out. */
const OTHER_OPTIONS = new Set([...['-p', '--paginate', '--bare', '--no-lazy-fetch', '--no-advice']])
/** Global options with a value, attached with `=` or in the next word. */
const OTHER_WITH_VALUE = ['--namespace', '--list-cmds', '--attr-source']

/** Variables that point git at another repository, configuration or program. */
const OUTSIDE_VARIABLES =
  /^GIT_(DIR|WORK_TREE|COMMON_DIR|INDEX_FILE|OBJECT_DIRECTORY|ALTERNATE_OBJECT_DIRECTORIES|CONFIG.*|EXEC_PATH|NAMESPACE|SSH.*|PROXY_COMMAND|EXTERNAL_DIFF|ASKPASS)$/

export const checkGit: CommandRuleCheck = (command, context) => {
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
  const findings: CommandFinding[] = []
  let index = 0
  for (; index < args.length; index += 1) {
    const word = args[index] as ShellWord
    const value = word.value
    if (value === undefined || (word.glob && couldBecomeOption(word)))
      return [dynamic(quoted(command), word)]
    if (!value.startsWith('-')) break
    const outside = OUTSIDE_OPTIONS.find((option) => value === option || value.startsWith(option))
    if (outside !== undefined || value.startsWith('--exec-path=')) {
      return [
        {
          verdict: 'deny',
          rule: 'git-outside-workspace',
          reason: `git ${outside ?? '--exec-path'} points git at another repository, configuration or program and is never allowed; run git in the workspace without it${outside === '-c' ? COMMIT_IDENTITY : ''}`,
        },
      ]
    }
    // git stops reading options at these and runs `git help REST` or `git version REST`.
    const stop = STOPPING_OPTIONS[value]
    if (stop !== undefined) {
      const rest = args.slice(index + 1)
      if (stop === 'version') return [...findings, ...judgeGitSubcommand('version', rest, context)]
      if (rest.length === 0 && value === '-h')
        return [...findings, { verdict: 'allow', rule: 'read-only', reason: 'git only prints' }]
      return [...findings, helpFinding([word, ...rest])]
    }
    if (READ_ONLY_OPTIONS.has(value)) continue
    const valued = OTHER_WITH_VALUE.find(
      (option) => value === option || value.startsWith(`${option}=`),
    )
    if (valued !== undefined || OTHER_OPTIONS.has(value)) {
      if (value === valued) index += 1
      findings.push({
        verdict: 'jail',
        rule: 'confined',
        reason: `git ${valued ?? value} is not an option known to only read (a pager, man or another view of the repository); it runs confined`,
      })
      continue
    }
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
    return [...findings, { verdict: 'allow', rule: 'read-only', reason: 'git only prints' }]
  const rest = args.slice(index + 1)
  findings.push(...judgeGitSubcommand(subcommand.value as string, rest, context))
  // A glob or brace that could make an option (`git reset {--soft,--hard}`) is as unknown as
  // `$x`: the subcommand's rules read only the words as written.
  const unknown = rest.find(
    (word) => word.value === undefined || (word.glob && couldBecomeOption(word)),
  )
  if (unknown !== undefined) findings.push(dynamic(quoted(command), unknown))
  if (findings.length === 0) {
    findings.push({
      verdict: 'jail',
      rule: 'confined',
      reason: `git ${subcommand.value ?? ''} is not known to only read; it runs confined`,
    })
  }
  return findings
}

function helpFinding(words: readonly ShellWord[]): CommandFinding {
  return {
    verdict: 'jail',
    rule: 'confined',
    reason: `git ${words.map((word) => word.text).join(' ')} is git help, which runs man (or what the configuration names for help); it runs confined`,
  }
}

function dynamic(command: string, word: ShellWord): CommandFinding {
  return {
    verdict: 'ask',
    rule: 'dynamic-argument',
    reason: `${command}: ${word.text} is only known when it runs (or the shell makes other words of it) and could be any git option; write it literally, quoted`,
  }
}
