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
 * | ask     | git-discards-changes   | `clean -f` (alone), `checkout`/`restore` of the whole tree   |
 * |         |                        | (`.`, `:/`, `*`), `checkout -f`, `switch -f`/`--discard-changes`, |
 * |         |                        | `stash drop`/`clear`                                         |
 * | allow   | read-only              | status, log, diff, show, describe, rev-parse, ls-files,      |
 * |         |                        | ls-tree, blame, shortlog, grep, rev-list, …; `branch` when   |
 * |         |                        | it only lists; `reflog` when it only shows                   |
 * | jail    | writes-file            | a read-only subcommand with `--output`, `--ext-diff`, `-O`   |
 * | jail    | confined               | everything else (commit, add, merge, rebase, `reset --soft`) |
 *
 * `clean -n` (a dry run) deletes nothing and is `jail`, like `clean` without `-f`, which git
 * refuses to run.
 */
import type { CommandFinding } from '../command-judgement.ts'
import type { ShellWord } from '../shell-syntax.ts'

const READ_ONLY = new Set([
  ...['status', 'log', 'diff', 'show', 'describe', 'rev-parse', 'ls-files', 'ls-tree', 'blame'],
  ...['shortlog', 'version', 'help', 'grep', 'rev-list', 'show-ref', 'merge-base'],
  ...['for-each-ref', 'cat-file', 'whatchanged', 'name-rev', 'count-objects', 'check-ignore'],
])

const OUTSIDE = new Set([
  ...['push', 'fetch', 'pull', 'clone', 'remote', 'submodule', 'config', 'ls-remote'],
  ...['send-email', 'send-pack', 'fetch-pack', 'http-fetch', 'http-push', 'upload-pack'],
  ...['receive-pack', 'upload-archive', 'daemon', 'instaweb', 'credential', 'credential-cache'],
  ...['credential-store', 'svn', 'p4', 'cvsimport', 'cvsexportcommit', 'cvsserver'],
  ...['request-pull', 'archimport'],
])

/** Pathspecs that name the whole work tree. */
const WHOLE_TREE = new Set(['.', './', ':/', ':/.', ':(top)', ':(top).', '*', ':/*', '/workspace'])

/** Options of a read-only subcommand that write a file or run a program. */
const WRITING_OPTIONS = ['--output', '--ext-diff', '-O', '--open-files-in-pager']

/** `git branch` options that only change how branches are listed or which. */
const BRANCH_LISTING = new Set([
  ...['--all', '--remotes', '--list', '--verbose', '--quiet', '--show-current', '--contains'],
  ...['--no-contains', '--merged', '--no-merged', '--points-at', '--sort', '--format'],
  ...['--color', '--no-color', '--column', '--no-column', '--abbrev', '--no-abbrev'],
  ...['--ignore-case', '--omit-empty'],
])
/** Listing options whose value may be the next word. */
const BRANCH_FILTERS = new Set([
  ...['--contains', '--no-contains', '--merged', '--no-merged', '--points-at', '--sort'],
  '--format',
])

/** Findings for `git SUBCOMMAND ARGS` (global options already judged). */
export function judgeGitSubcommand(
  subcommand: string,
  args: readonly ShellWord[],
): CommandFinding[] {
  const values = args.flatMap((word) => (word.value === undefined ? [] : [word.value]))
  switch (subcommand) {
    case 'push':
      return isForced(values)
        ? [destroys('a forced push overwrites history on the remote')]
        : [outside(subcommand)]
    case 'reset':
      return values.includes('--hard')
        ? [destroys('git reset --hard throws away every uncommitted change')]
        : []
    case 'clean':
      return cleanFindings(values)
    case 'checkout':
      return hasShort(values, 'f', '--force') || values.some((value) => WHOLE_TREE.has(value))
        ? [discards(`git checkout ${values.join(' ')}`)]
        : []
    case 'restore': {
      const stagedOnly = hasShort(values, 'S', '--staged') && !hasShort(values, 'W', '--worktree')
      return !stagedOnly && values.some((value) => WHOLE_TREE.has(value))
        ? [discards(`git restore ${values.join(' ')}`)]
        : []
    }
    case 'switch':
      return values.some((value) => ['-f', '--force', '--discard-changes'].includes(value))
        ? [discards(`git switch ${values.join(' ')}`)]
        : []
    case 'stash':
      return values[0] === 'drop' || values[0] === 'clear'
        ? [discards(`git stash ${values[0]}`)]
        : []
    case 'branch':
      return isBranchListing(values) ? [readOnly()] : []
    case 'reflog':
      return ['expire', 'delete', 'drop'].includes(values[0] ?? '') ? [] : [readOnly()]
    case 'archive':
      return values.some((value) => /^--(remote|exec)/.test(value))
        ? [outside('archive --remote')]
        : []
    case 'worktree':
      return values[0] === 'add' || values[0] === 'move' ? [outside(`worktree ${values[0]}`)] : []
  }
  if (OUTSIDE.has(subcommand)) return [outside(subcommand)]
  if (!READ_ONLY.has(subcommand)) return []
  const writing = values.find((value) =>
    WRITING_OPTIONS.some((option) => value === option || value.startsWith(`${option}=`)),
  )
  if (writing === undefined) return [readOnly()]
  return [
    {
      verdict: 'jail',
      rule: 'writes-file',
      reason: `git ${subcommand} ${writing} writes a file or runs a program; it runs confined`,
    },
  ]
}

/** True when `-L` (alone or in a bundle of short options) or `long` is among the values. */
function hasShort(values: readonly string[], letter: string, long: string): boolean {
  return values.some(
    (value) => value === long || (/^-[A-Za-z]+$/.test(value) && value.slice(1).includes(letter)),
  )
}

function isForced(values: readonly string[]): boolean {
  return values.some(
    (value) =>
      value.startsWith('--force') ||
      (/^-[A-Za-z]+$/.test(value) && value.includes('f')) ||
      (value.startsWith('+') && value.length > 1),
  )
}

function cleanFindings(values: readonly string[]): CommandFinding[] {
  const dryRun = hasShort(values, 'n', '--dry-run')
  if (dryRun || !hasShort(values, 'f', '--force')) return []
  const wide = ['d', 'x', 'X'].some((letter) => hasShort(values, letter, `-${letter}`))
  return wide
    ? [destroys(`git clean ${values.join(' ')} deletes untracked (or ignored) files and folders`)]
    : [discards(`git clean ${values.join(' ')}`)]
}

function isBranchListing(values: readonly string[]): boolean {
  const listing = values.some((value) => value === '--list' || /^-[arvqi]*l[arlvqi]*$/.test(value))
  let expectsFilterValue = false
  for (const value of values) {
    if (value.startsWith('--')) {
      const name = value.split('=')[0] as string
      if (!BRANCH_LISTING.has(name)) return false
      expectsFilterValue = BRANCH_FILTERS.has(name) && !value.includes('=')
    } else if (value.startsWith('-')) {
      if (!/^-[arlvqi]+$/.test(value)) return false
      expectsFilterValue = false
    } else {
      // A name after `git branch` creates a branch, unless it is a pattern or a filter's value.
      if (!listing && !expectsFilterValue) return false
      expectsFilterValue = false
    }
  }
  return true
}

function readOnly(): CommandFinding {
  return { verdict: 'allow', rule: 'read-only', reason: 'git only reads the repository' }
}

function outside(what: string): CommandFinding {
  return {
    verdict: 'deny',
    rule: 'git-outside-workspace',
    reason: `git ${what} reaches outside the workspace (a remote, another repository or git's configuration) and is never allowed; work with the local repository only`,
  }
}

function destroys(what: string): CommandFinding {
  return {
    verdict: 'deny',
    rule: 'git-destroys-work',
    reason: `${what}, which cannot be undone; this is never allowed: commit or stash first, or delete only the paths you mean`,
  }
}

function discards(what: string): CommandFinding {
  return {
    verdict: 'ask',
    rule: 'git-discards-changes',
    reason: `${what} throws away uncommitted changes in the workspace; a person must approve this`,
  }
}
