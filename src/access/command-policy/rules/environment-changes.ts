/**
 * @module access/command-policy/rules/environment-changes
 * Variables a command sets, by assignment (`X=1`, `X=1 cmd`, `export X=1`) or through a builtin
 * (`read X`, `printf -v X`, `env -u X cmd`). The shell and the programs it runs obey many
 * variables (`PATH`, `LD_PRELOAD`, `GIT_CONFIG_*`, `PAGER`, `RIPGREP_CONFIG_PATH`, …), and
 * the jail's own environment is made of such names, so the list is closed the other way: a
 * variable keeps a command in `allow` only when its name is all lowercase (by convention the
 * shell's own; neither bash nor the jail gives those a meaning) or on a short list of names
 * that only change how text is printed. Any other name makes the command `jail`.
 */
import type { CommandFinding } from '../command-judgement.ts'
import { parseModeFinding, variableChangesParsing } from '../parse-modes.ts'
import type { Assignment } from '../shell-syntax.ts'

const LOWERCASE_NAME = /^[a-z_][a-z0-9_]*$/
/** Lowercase names that do mean something: to interactive bash, or to network clients. */
const MEANINGFUL_LOWERCASE = new Set([
  ...['auto_resume', 'histchars', 'http_proxy', 'https_proxy', 'ftp_proxy', 'all_proxy'],
  'no_proxy',
])
/** Names that only change language, time zone, width or colour, or that bash sets itself. */
const HARMLESS_NAMES = new Set([
  ...['LANG', 'LANGUAGE', 'TZ', 'COLUMNS', 'LINES', 'NO_COLOR'],
  ...['REPLY', 'MAPFILE', 'OPTARG', 'OPTIND'],
])
const HARMLESS_PREFIXES = ['LC_']

/** True when setting `name` changes nothing the shell or a later program obeys. */
export function isHarmlessVariable(name: string): boolean {
  if (LOWERCASE_NAME.test(name)) return !MEANINGFUL_LOWERCASE.has(name)
  return HARMLESS_NAMES.has(name) || HARMLESS_PREFIXES.some((prefix) => name.startsWith(prefix))
}

/** The finding for setting (or unsetting) `name`, or undefined when it is harmless. */
export function variableFinding(name: string): CommandFinding | undefined {
  if (isHarmlessVariable(name)) return undefined
  return {
    verdict: 'jail',
    rule: 'environment',
    reason: `setting ${name} can change what the shell or a later program loads or runs; the command runs confined`,
  }
}

/** Findings for assignments made before or for a command (`X=1 cmd`, `env X=1 cmd`). */
export function environmentFindings(assignments: readonly Assignment[]): CommandFinding[] {
  return assignments.flatMap(({ name }) => variableFinding(name) ?? [])
}

/**
 * The finding for setting `name` in the shell itself (`X=1` alone, `export X=1`, `read X`):
 * `POSIXLY_CORRECT` and `BASH_COMPAT` also change how bash reads the rest of the command.
 */
export function shellVariableFinding(name: string): CommandFinding | undefined {
  if (variableChangesParsing(name)) return parseModeFinding(`setting ${name}`)
  return variableFinding(name)
}

/** Findings for assignments the shell makes for itself. */
export function shellEnvironmentFindings(assignments: readonly Assignment[]): CommandFinding[] {
  return assignments.flatMap(({ name }) => shellVariableFinding(name) ?? [])
}
