/**
 * @module access/command-policy/rules/environment
 * Assignments that change what later programs load or run (`PATH=…`, `LD_PRELOAD=…`,
 * `GIT_DIR=…`). They take a read-only command out of `allow`; the jail still confines them.
 */
import type { CommandFinding } from '../command-judgement.ts'
import type { Assignment } from '../shell-syntax.ts'

/** Variables read by the shell, the loader, git or an interpreter to find code or config. */
const SENSITIVE_NAMES = new Set([
  ...['PATH', 'ENV', 'BASH_ENV', 'IFS', 'SHELLOPTS', 'BASHOPTS', 'PS4', 'PROMPT_COMMAND'],
  ...['HOME', 'XDG_CONFIG_HOME', 'PAGER', 'MANPAGER', 'EDITOR', 'VISUAL', 'BROWSER'],
  ...['GCONV_PATH', 'LESSOPEN', 'NODE_OPTIONS', 'NODE_PATH', 'PYTHONPATH', 'PYTHONSTARTUP'],
  ...['PERL5OPT', 'PERL5LIB', 'RUBYOPT', 'RUBYLIB'],
])
const SENSITIVE_PREFIXES = ['LD_', 'DYLD_', 'GIT_', 'BASH_FUNC_']

/** Findings for assignments made before or for a command, or on their own. */
export function environmentFindings(assignments: readonly Assignment[]): CommandFinding[] {
  return assignments
    .filter(
      ({ name }) =>
        SENSITIVE_NAMES.has(name) || SENSITIVE_PREFIXES.some((prefix) => name.startsWith(prefix)),
    )
    .map(({ name }) => ({
      verdict: 'jail',
      rule: 'environment',
      reason: `setting ${name} changes which programs run or what they load; the command runs confined`,
    }))
}
