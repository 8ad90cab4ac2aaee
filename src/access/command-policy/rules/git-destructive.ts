/**
 * @module access/command-policy/rules/git-destructive
 * git that destroys uncommitted work or history. `reset --hard`, a forced push and
 * `clean -f` with `-d`, `-x` or `-X` are denied; everything else that destroys work asks:
 *
 * - work tree or index: `clean -f`, `checkout -f` or of the whole tree, `restore` of the whole
 *   tree, `switch -f`/`--discard-changes`, `reset --merge`/`--keep`, `rm -f` (not `--cached`)
 *   or of the whole tree, `read-tree` (it replaces the index; `-u` the files too),
 *   `checkout-index -f`, `merge`/`rebase`/`cherry-pick`/`revert`/`am` `--abort` or `--skip`;
 * - history: `stash drop`/`clear`, `update-ref -d`/`--stdin`, `symbolic-ref -d`, `branch -D`
 *   (and `-d -f`, `-M`, `-C`), `tag -d`/`-f`, `reflog expire`/`delete`, `gc --prune`, `prune`,
 *   `repack -a -d`, `worktree remove -f`, `filter-branch`, `filter-repo`, `replace`.
 *
 * Options are matched as git could read them: a long option by any prefix of its name
 * (`--har` is `--hard`), a short one anywhere in a bundle (`-fd`). A form that only reads
 * (`-n`, `--dry-run`, `--cached`) must be spelled exactly to lower the verdict. No list of this
 * kind is complete (a script can delete anything); the jail and the workspace history are what
 * make such mistakes recoverable.
 */
import type { CommandFinding } from '../command-judgement.ts'

/** Pathspecs that name the whole work tree. */
const WHOLE_TREE = new Set(['.', './', ':/', ':/.', ':(top)', ':(top).', '*', ':/*', '/workspace'])

/** The options and operands of a git subcommand, as written (before `--`) and after. */
export interface GitArguments {
  readonly options: readonly string[]
  readonly operands: readonly string[]
}

/** Splits literal `values` at the first `--`. */
export function gitArguments(values: readonly string[]): GitArguments {
  const end = values.indexOf('--')
  const before = end === -1 ? values : values.slice(0, end)
  const after = end === -1 ? [] : values.slice(end + 1)
  return {
    options: before.filter((value) => value.startsWith('-') && value !== '-'),
    operands: [...before.filter((value) => !value.startsWith('-') || value === '-'), ...after],
  }
}

/** True when an option could be `long` or, in a bundle, the letter `short`. */
export function mayHave(args: GitArguments, long: string, short?: string): boolean {
  return args.options.some((option) => {
    if (option.startsWith('--')) {
      const name = option.slice(2).split('=')[0] as string
      return name !== '' && long.startsWith(name)
    }
    return short !== undefined && option.slice(1).includes(short)
  })
}

/** True when the short option `letter` is given, alone or in a bundle. */
function hasLetter(args: GitArguments, letter: string): boolean {
  return args.options.some((option) => !option.startsWith('--') && option.slice(1).includes(letter))
}

/** True when the option is surely given: `--long` in full, or `-s` alone or in a bundle. */
function surely(args: GitArguments, long: string, short?: string): boolean {
  return args.options.some(
    (option) =>
      option === `--${long}` ||
      (short !== undefined && /^-[A-Za-z]+$/.test(option) && option.includes(short)),
  )
}

const touchesWholeTree = (args: GitArguments): boolean =>
  args.operands.some((value) => WHOLE_TREE.has(value)) || mayHave(args, 'pathspec-from-file')

/** Findings for a subcommand that destroys work, or none. */
export function destructiveFindings(
  subcommand: string,
  values: readonly string[],
): CommandFinding[] {
  const args = gitArguments(values)
  const first = args.operands[0]
  const asks = (what: string): CommandFinding[] => [discards(`git ${subcommand} ${what}`)]
  switch (subcommand) {
    case 'reset':
      if (mayHave(args, 'hard'))
        return [destroys('git reset --hard throws away every uncommitted change')]
      return mayHave(args, 'merge') || mayHave(args, 'keep') ? asks('--merge/--keep') : []
    case 'clean':
      return cleanFindings(args)
    case 'checkout':
      return mayHave(args, 'force', 'f') || touchesWholeTree(args) ? asks(values.join(' ')) : []
    case 'restore': {
      const stagedOnly = surely(args, 'staged', 'S') && !mayHave(args, 'worktree', 'W')
      return !stagedOnly && touchesWholeTree(args) ? asks(values.join(' ')) : []
    }
    case 'switch':
      return mayHave(args, 'discard-changes', 'f') || mayHave(args, 'force')
        ? asks(values.join(' '))
        : []
    case 'rm': {
      if (surely(args, 'dry-run', 'n')) return []
      const cached = surely(args, 'cached')
      const forced = mayHave(args, 'force', 'f') && !cached
      return forced || (!cached && touchesWholeTree(args)) ? asks(values.join(' ')) : []
    }
    case 'read-tree':
      return surely(args, 'dry-run', 'n')
        ? []
        : asks('(it replaces the index, and with -u the files)')
    case 'checkout-index':
      return mayHave(args, 'force', 'f') ? asks('-f') : []
    case 'merge':
    case 'rebase':
    case 'cherry-pick':
    case 'revert':
    case 'am':
      return mayHave(args, 'abort') || (subcommand !== 'merge' && mayHave(args, 'skip'))
        ? asks('--abort/--skip (it resets the work tree)')
        : []
    case 'stash':
      return first === 'drop' || first === 'clear' ? asks(first) : []
    case 'update-ref':
      return mayHave(args, 'stdin') || hasLetter(args, 'd')
        ? [lost('git update-ref -d (or --stdin)')]
        : []
    case 'symbolic-ref':
      return mayHave(args, 'delete', 'd') ? [lost('git symbolic-ref --delete')] : []
    case 'branch': {
      const forced = mayHave(args, 'force', 'f')
      const deletes = hasLetter(args, 'D') || (mayHave(args, 'delete', 'd') && forced)
      const moves = hasLetter(args, 'M') || hasLetter(args, 'C')
      const forcedMove = (mayHave(args, 'move', 'm') || mayHave(args, 'copy', 'c')) && forced
      return deletes || moves || forcedMove ? [lost(`git branch ${values.join(' ')}`)] : []
    }
    case 'tag':
      return mayHave(args, 'delete', 'd') || mayHave(args, 'force', 'f')
        ? [lost(`git tag ${values.join(' ')}`)]
        : []
    case 'reflog':
      return ['expire', 'delete', 'drop'].includes(first ?? '') ? [lost(`git reflog ${first}`)] : []
    case 'gc':
      return mayHave(args, 'prune') && !surely(args, 'no-prune') ? [lost('git gc --prune')] : []
    case 'prune':
      return surely(args, 'dry-run', 'n') ? [] : [lost('git prune')]
    case 'repack': {
      const dropsUnreachable =
        hasLetter(args, 'a') && hasLetter(args, 'd') && !mayHave(args, 'keep-unreachable', 'k')
      return dropsUnreachable ? [lost('git repack -a -d')] : []
    }
    case 'worktree':
      return first === 'remove' && mayHave(args, 'force', 'f') ? asks('remove --force') : []
    case 'replace': {
      const listing = args.operands.length === 0 || mayHave(args, 'list', 'l')
      return listing && !mayHave(args, 'delete', 'd')
        ? []
        : [lost(`git replace ${values.join(' ')}`)]
    }
    case 'filter-branch':
    case 'filter-repo':
      return [lost(`git ${subcommand}`)]
    default:
      return []
  }
}

function cleanFindings(args: GitArguments): CommandFinding[] {
  if (surely(args, 'dry-run', 'n') || !mayHave(args, 'force', 'f')) return []
  const wide = ['d', 'x', 'X'].some((letter) => mayHave(args, `-${letter}`, letter))
  const written = args.options.join(' ')
  return wide
    ? [destroys(`git clean ${written} deletes untracked (or ignored) files and folders`)]
    : [discards(`git clean ${written}`)]
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

function lost(what: string): CommandFinding {
  return {
    verdict: 'ask',
    rule: 'git-discards-changes',
    reason: `${what} deletes history or the records that recover it; a person must approve this`,
  }
}
