/**
 * @module access/command-policy/rules/git-subcommands
 * The git table. In order of precedence:
 *
 * | verdict | rule                   | subcommands                                                  |
 * | ------- | ---------------------- | ------------------------------------------------------------ |
 * | deny    | git-destroys-work      | `push` forced (`-f`, `--force*`, `+ref`), `reset --hard`,     |
 * |         |                        | `clean -f` with `-d`, `-x` or `-X`                            |
 * | deny    | git-outside-workspace  | push, fetch, pull, clone, remote, submodule, config,         |
 * |         |                        | ls-remote, send-email, credential…, daemon, svn, p4, …,      |
 * |         |                        | `archive --remote/--exec`, `worktree add/move`               |
 * | ask     | git-discards-changes   | what destroys uncommitted work or history (see               |
 * |         |                        | git-destructive.ts): `clean -f`, `checkout .`, `rm -f`,      |
 * |         |                        | `reset --merge`, `branch -D`, `update-ref -d`, `gc --prune`… |
 * | allow   | read-only              | status, log, diff, show, describe, rev-parse, ls-files,      |
 * |         |                        | ls-tree, blame, shortlog, grep, rev-list, …, with only the   |
 * |         |                        | options of git-read-only.ts; `branch` when it only lists;    |
 * |         |                        | `reflog` when it only shows                                  |
 * | jail    | writes-file            | a read-only subcommand with `--output`, `--ext-diff`, `-O`…  |
 * | jail    | confined               | everything else (commit, add, merge, rebase, `reset --soft`, |
 * |         |                        | `help`, which runs man), and any option not on the list      |
 *
 * `clean -n` (a dry run) deletes nothing and is `jail`, like `clean` without `-f`, which git
 * refuses to run.
 */
import type { CommandFinding } from '../command-judgement.ts'
import { optionTable } from '../option-table.ts'
import { hasOption, scanOptions } from '../scan-options.ts'
import type { ShellWord } from '../shell-syntax.ts'
import { destructiveFindings, gitArguments, mayHave } from './git-destructive.ts'
import { GIT_LOG, GIT_READERS, judgeGitReader } from './git-read-only.ts'
import type { RuleContext } from './rule.ts'

/** How to commit under a name without git's configuration (a refusal of `git config`, `-c`). */
export const COMMIT_IDENTITY =
  '; to commit under a name, set GIT_AUTHOR_NAME, GIT_AUTHOR_EMAIL, GIT_COMMITTER_NAME and GIT_COMMITTER_EMAIL for the command'

const OUTSIDE = new Set([
  ...['push', 'fetch', 'pull', 'clone', 'remote', 'submodule', 'config', 'ls-remote'],
  ...['send-email', 'send-pack', 'fetch-pack', 'http-fetch', 'http-push', 'upload-pack'],
  ...['receive-pack', 'upload-archive', 'daemon', 'instaweb', 'credential', 'credential-cache'],
  ...['credential-store', 'svn', 'p4', 'cvsimport', 'cvsexportcommit', 'cvsserver'],
  ...['request-pull', 'archimport'],
])

/**
 * `git branch` options that only change how branches are listed or which (git 2.39), read as
 * git's parse-options does: a value is the next word whatever it looks like, so in
 * `git branch --format --list x` the format is `--list` and `x` is a branch git makes. `--contains`,
 * `--merged` and their `--no-` forms take the next word when there is one.
 */
const BRANCH_LISTING = optionTable(
  [
    'a|all r|remotes l|list v|verbose q|quiet show-current contains= no-contains= merged=',
    'no-merged= points-at= sort= format= color? no-color column? no-column abbrev? no-abbrev',
    'i|ignore-case omit-empty h',
  ].join(' '),
)

/** Findings for `git SUBCOMMAND ARGS` (global options already judged). */
export function judgeGitSubcommand(
  subcommand: string,
  args: readonly ShellWord[],
  context: RuleContext,
): CommandFinding[] {
  const values = args.flatMap((word) => (word.value === undefined ? [] : [word.value]))
  const parsed = gitArguments(values)
  switch (subcommand) {
    case 'push':
      return isForced(values)
        ? [destroys('a forced push overwrites history on the remote')]
        : [outside(subcommand)]
    case 'archive':
      return mayHave(parsed, 'remote') || mayHave(parsed, 'exec')
        ? [outside('archive --remote')]
        : []
    case 'worktree':
      if (values[0] === 'add' || values[0] === 'move') return [outside(`worktree ${values[0]}`)]
  }
  if (OUTSIDE.has(subcommand)) return [outside(subcommand)]
  const destructive = destructiveFindings(subcommand, values)
  if (destructive.length > 0) return destructive
  if (subcommand === 'branch') return isBranchListing(args) ? [readOnly()] : []
  if (subcommand === 'reflog') {
    // `git reflog` and `git reflog show` take the options of `git log`.
    const rest = args[0]?.value === 'show' ? args.slice(1) : args
    if (args[0]?.value === 'exists') return [readOnly()]
    return [judgeGitReader('reflog', GIT_LOG, rest, context)]
  }
  const reader = GIT_READERS[subcommand]
  return reader === undefined ? [] : [judgeGitReader(subcommand, reader, args, context)]
}

function isForced(values: readonly string[]): boolean {
  return values.some(
    (value) =>
      value.startsWith('--force') ||
      (value.startsWith('--f') && 'force'.startsWith(value.slice(2))) ||
      (/^-[A-Za-z]+$/.test(value) && value.includes('f')) ||
      (value.startsWith('+') && value.length > 1),
  )
}

/**
 * True when `git branch ARGS` only lists: every option is a listing one, spelled in full, and
 * a name is a pattern (`--list`) or there is none (a name alone makes a branch).
 */
function isBranchListing(args: readonly ShellWord[]): boolean {
  const scan = scanOptions(args, BRANCH_LISTING, { exactLong: true, globsMayBeOptions: true })
  if (scan.unknown.length > 0 || scan.dynamic.length > 0) return false
  return scan.operands.length === 0 || hasOption(scan, 'list')
}

function readOnly(): CommandFinding {
  return { verdict: 'allow', rule: 'read-only', reason: 'git only reads the repository' }
}

function outside(what: string): CommandFinding {
  return {
    verdict: 'deny',
    rule: 'git-outside-workspace',
    reason: `git ${what} reaches outside the workspace (a remote, another repository or git's configuration) and is never allowed; work with the local repository only${what === 'config' ? COMMIT_IDENTITY : ''}`,
  }
}

function destroys(what: string): CommandFinding {
  return {
    verdict: 'deny',
    rule: 'git-destroys-work',
    reason: `${what}, which cannot be undone; this is never allowed: commit or stash first, or delete only the paths you mean`,
  }
}
