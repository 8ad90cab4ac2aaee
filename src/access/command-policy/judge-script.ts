/**
 * @module access/command-policy/judge-script
 * Judges every unit of a parsed command: resolves wrappers, runs each rule family, and adds the
 * parts of nested shell code (`bash -c '…'`) as parts of their own.
 */
import type { Parser } from 'web-tree-sitter'
import {
  judgementOf,
  mostSevere,
  type CommandFinding,
  type CommandPart,
} from './command-judgement.ts'
import { parseShell } from './parse-shell.ts'
import { resolveCommand, type ResolvedCommand } from './resolve-command.ts'
import { checkDiskAndPower } from './rules/disk-and-power.ts'
import { checkDownload } from './rules/download.ts'
import { environmentFindings, shellEnvironmentFindings } from './rules/environment-changes.ts'
import { checkFind } from './rules/find.ts'
import { checkGit } from './rules/git.ts'
import { checkPrivilege } from './rules/privilege.ts'
import { checkProgramRunners } from './rules/program-runners.ts'
import { checkReadOnly } from './rules/read-only.ts'
import { checkRecursiveDelete } from './rules/recursive-delete.ts'
import { redirectFindings } from './rules/redirects.ts'
import type { CommandRuleCheck, RuleContext } from './rules/rule.ts'
import { checkShellCode } from './rules/shell-code.ts'
import { checkVariables } from './rules/variables.ts'
import type { ShellUnit } from './shell-syntax.ts'

/** Shell code nested deeper than this (`bash -c "bash -c '…'"`) is refused, not read. */
export const MAX_NESTING_DEPTH = 8

/**
 * Every rule family, in the order that breaks ties between equally severe findings: the first
 * names the rule of the part (so `curl … | sudo bash` is reported as a download run as code).
 */
const RULES: readonly CommandRuleCheck[] = [
  checkDownload,
  checkPrivilege,
  checkDiskAndPower,
  checkRecursiveDelete,
  checkGit,
  checkFind,
  checkShellCode,
  checkProgramRunners,
  checkVariables,
  checkReadOnly,
]

/**
 * Parses and judges `source`, `depth` levels of shell code deep. Invalid shell is a `deny` part;
 * only a fault in the parser or a rule throws (the policy turns that into `deny` too).
 */
export function judgeScript(parser: Parser, source: string, depth: number): CommandPart[] {
  if (depth > MAX_NESTING_DEPTH) {
    return [
      {
        command: source,
        verdict: 'deny',
        rule: 'nesting-limit',
        reason: `shell code is nested more than ${MAX_NESTING_DEPTH} levels deep; write the commands out directly`,
      },
    ]
  }
  const parsed = parseShell(parser, source)
  if (parsed.type === 'error') {
    return [
      {
        command: source,
        verdict: 'deny',
        rule: 'unparseable',
        reason: `the command is not valid shell (${parsed.message}); fix the syntax and try again`,
      },
    ]
  }
  if (parsed.type === 'ambiguous') {
    return [
      {
        command: source,
        verdict: 'deny',
        rule: 'ambiguous-syntax',
        reason: `bash could read this command otherwise than the policy does, so the policy cannot tell which commands it runs: ${parsed.message}`,
      },
    ]
  }
  const parts: CommandPart[] = []
  const context: RuleContext = {
    judgeScript: (inner) => {
      const innerParts = judgeScript(parser, inner, depth + 1)
      parts.push(...innerParts)
      return judgementOf(innerParts)
    },
    judgeCommand: (command) => partFinding(judgeResolved(command, context)),
  }
  for (const unit of parsed.units) parts.push(judgeUnit(unit, context))
  const elsewhere = gitElsewhere(parsed.units)
  if (elsewhere !== undefined) parts.push(elsewhere)
  return parts
}

/** Builtins that change the folder later commands run in. */
const MOVES_DIRECTORY = new Set(['cd', 'pushd', 'popd'])

/**
 * git run after `cd` (or under `env -C`) may find another repository there, such as a bare
 * repository committed into the workspace, and obey its configuration (a textconv or diff
 * program): not `allow`.
 */
function gitElsewhere(units: readonly ShellUnit[]): CommandPart | undefined {
  const commands = units.flatMap((unit) => {
    if (unit.type !== 'command') return []
    const resolution = resolveCommand(unit.command)
    return resolution.type === 'resolved' ? [resolution.command] : []
  })
  const moves = commands.some((command) => MOVES_DIRECTORY.has(command.name))
  const git = commands.find(
    (command) => command.name === 'git' && (moves || command.changesDirectory),
  )
  if (git === undefined) return undefined
  return {
    command: git.source.text,
    verdict: 'jail',
    rule: 'confined',
    reason: `${git.source.text} runs in another folder than the workspace root, where git may find another repository and obey its configuration; it runs confined`,
  }
}

function judgeUnit(unit: ShellUnit, context: RuleContext): CommandPart {
  switch (unit.type) {
    case 'command': {
      const command = unit.command
      const findings = [...redirectFindings(command.redirects)]
      const resolution = resolveCommand(command)
      if (resolution.type === 'unclear') findings.push(resolution.finding)
      if (resolution.type === 'resolved') {
        findings.push(...environmentFindings(resolution.command.assignments))
        findings.push(...judgeResolved(resolution.command, context))
      } else findings.push(...shellEnvironmentFindings(command.assignments), setsVariables())
      return { command: command.text, ...partFinding(findings) }
    }
    case 'assignment':
      return {
        command: unit.text,
        ...partFinding([...shellEnvironmentFindings(unit.assignments), setsVariables()]),
      }
    case 'redirect':
      return {
        command: unit.text,
        ...partFinding([
          ...redirectFindings(unit.redirects),
          { verdict: 'allow', rule: 'read-only', reason: 'only redirects' },
        ]),
      }
    case 'construct':
      if (unit.risk !== undefined) {
        return {
          command: unit.text,
          verdict: 'jail',
          rule: 'confined',
          reason: `${unit.risk}; the command runs confined`,
        }
      }
      return {
        command: unit.text,
        verdict: 'allow',
        rule: 'read-only',
        reason: 'only touches the shell itself',
      }
  }
}

/** Every rule's findings for a resolved command; `confined` when no rule had anything to say. */
function judgeResolved(command: ResolvedCommand, context: RuleContext): CommandFinding[] {
  const findings = RULES.flatMap((rule) => rule(command, context))
  // `./git` or `tools/find` is whatever the workspace put there, whatever its name.
  if (!command.systemProgram) findings.push(workspaceProgram(command))
  if (findings.length > 0) return [...findings, ...command.wrapperFindings]
  // What the wrappers do counts whatever they run: `exec -a NAME` asks for a program no rule
  // knows too (bash named `-bash` reads its profile).
  return [
    {
      verdict: 'jail',
      rule: 'confined',
      reason: `${command.name} is not known to only read; it runs confined in the jail`,
    },
    ...command.wrapperFindings,
  ]
}

function workspaceProgram(command: ResolvedCommand): CommandFinding {
  return {
    verdict: 'jail',
    rule: 'confined',
    reason: `${command.name} is named by a path outside the system bin folders, so it is whatever was put there and not known to only read; it runs confined`,
  }
}

function partFinding(findings: readonly CommandFinding[]): CommandFinding {
  const worst = mostSevere(findings)
  if (worst === undefined) return { verdict: 'jail', rule: 'confined', reason: 'runs confined' }
  return { verdict: worst.verdict, rule: worst.rule, reason: worst.reason }
}

function setsVariables(): CommandFinding {
  return { verdict: 'allow', rule: 'read-only', reason: 'only sets shell variables' }
}
