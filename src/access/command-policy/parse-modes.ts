/**
 * @module access/command-policy/parse-modes
 * Settings that change how bash reads the code after them, which the policy's parser does not
 * follow: with `expand_aliases` a word can become any text (`alias c=eval`), with `extglob`
 * `@(…)` and `!(…)` become words, and `posix` mode or a compatibility level changes how quotes
 * and expansions are read. Turning one on in a script, or for a nested `bash -c`, is refused
 * like any other place where bash and the parser could part (parser-differences.ts).
 */
import type { CommandFinding } from './command-judgement.ts'

/** Bash options (`shopt -s`, `set -o`, `bash -O`/`-o`) that change how code is read. */
export function changesParsing(option: string): boolean {
  return (
    option === 'extglob' ||
    option === 'expand_aliases' ||
    option === 'posix' ||
    /^compat\d+$/.test(option)
  )
}

/**
 * Variables that change how bash reads code: `POSIXLY_CORRECT` and `BASH_COMPAT`, and
 * `SHELLOPTS` and `BASHOPTS`, which a bash started with them in its environment turns on.
 */
export function variableChangesParsing(name: string): boolean {
  return ['POSIXLY_CORRECT', 'BASH_COMPAT', 'SHELLOPTS', 'BASHOPTS'].includes(name)
}

/** The finding for a setting that changes how bash reads later code. */
export function parseModeFinding(what: string): CommandFinding {
  return {
    verdict: 'deny',
    rule: 'ambiguous-syntax',
    reason: `${what} changes how bash reads the code after it, which the policy's parser does not follow, so it could not tell which commands run; write the commands without it (for example find instead of extended globs, a function instead of an alias)`,
  }
}
