/**
 * @module access/command-policy/rules/git-read-only
 * The git subcommands that only read, each with the closed list of options known to only read
 * (git 2.39). git resolves an abbreviated long option to the option it prefixes
 * (`git log --out=f` is `--output=f`), so options count only when spelled in full; an option
 * whose value git takes only when attached (`-U5`, `--stat=50`) is written with `?`, so the
 * next word is judged on its own. Anything not listed keeps the command out of `allow`; so do
 * options that reach into submodules (other repositories, with their own configuration) and
 * pretty formats that verify signatures (`%G?` runs gpg).
 */
import type { CommandFinding } from '../command-judgement.ts'
import { optionTable } from '../option-table.ts'
import { scanOptions, type OptionDefinition } from '../scan-options.ts'
import type { ShellWord } from '../shell-syntax.ts'
import type { RuleContext } from './rule.ts'

/** Options of the diff machinery (diff, log -p, show) that only change what is printed. */
const DIFF_OPTIONS = [
  'p u patch s no-patch U? unified? output-indicator-new= output-indicator-old=',
  'output-indicator-context= raw patch-with-raw t indent-heuristic no-indent-heuristic minimal',
  'patience histogram anchored= diff-algorithm= stat? compact-summary numstat shortstat X?',
  'dirstat? cumulative dirstat-by-file? summary patch-with-stat z name-only name-status',
  'color? no-color color-moved? no-color-moved color-moved-ws= no-color-moved-ws',
  'word-diff? word-diff-regex= color-words? no-renames rename-empty no-rename-empty check',
  'ws-error-highlight= full-index binary abbrev? B? break-rewrites? M? find-renames? C?',
  'find-copies? find-copies-harder D irreversible-delete l? diff-filter= S= G= find-object=',
  'pickaxe-all pickaxe-regex skip-to= rotate-to= R relative? no-relative a text',
  'ignore-cr-at-eol ignore-space-at-eol b ignore-space-change w ignore-all-space',
  'ignore-blank-lines I= ignore-matching-lines= inter-hunk-context= W function-context',
  'exit-code quiet no-ext-diff no-textconv ignore-submodules? src-prefix= dst-prefix=',
  'no-prefix default-prefix line-prefix= stat-width= stat-name-width= stat-graph-width=',
  'stat-count=',
].join(' ')

/** Options of the revision walk and of how commits are printed. */
const LOG_OPTIONS = [
  'n= max-count= skip= since= after= until= before= author= committer= grep= all-match',
  'invert-grep i regexp-ignore-case basic-regexp E extended-regexp F fixed-strings P',
  'perl-regexp merges no-merges first-parent not all branches? tags? remotes? glob? exclude?',
  'reflog cherry-mark cherry-pick left-only right-only cherry walk-reflogs g boundary',
  'simplify-by-decoration full-history dense sparse simplify-merges ancestry-path? date-order',
  'author-date-order topo-order reverse no-walk? do-walk pretty? format? abbrev-commit',
  'no-abbrev-commit oneline encoding? expand-tabs? no-expand-tabs notes? no-notes',
  'show-notes? relative-date date? parents children left-right graph c cc m',
  'diff-merges? no-diff-merges follow decorate? no-decorate decorate-refs?',
  'decorate-refs-exclude? source clear-decorations log-size L= mailmap use-mailmap no-mailmap',
  'full-diff',
].join(' ')

/** How one read-only subcommand may be called. */
export interface GitReader {
  readonly reads: readonly OptionDefinition[]
  /** Options known to write a file or run a program. */
  readonly writes: readonly OptionDefinition[]
  /** `-5` is an option (`git log -5`, `git grep -3`). */
  readonly numericOptions?: boolean
  /** Options (by name) whose value git runs as shell code (`git grep -O'…'`). */
  readonly shellOptions?: readonly string[]
}

const reader = (spec: string, writes = '', numericOptions = false): GitReader => ({
  reads: optionTable(`${spec} h`),
  writes: optionTable(writes),
  numericOptions,
})

/** `--output` writes a file; `--ext-diff` and `--textconv` run configured programs. */
const DIFF_WRITES = 'output= ext-diff textconv'
/** `--show-signature` runs gpg to check signatures. */
const LOG_WRITES = `${DIFF_WRITES} show-signature`

/** `git log`, whose options `git reflog show` takes too. */
export const GIT_LOG: GitReader = reader(`${LOG_OPTIONS} ${DIFF_OPTIONS}`, LOG_WRITES, true)

/** Every read-only subcommand, by name. */
export const GIT_READERS: Readonly<Record<string, GitReader>> = {
  status: reader(
    's short b branch show-stash porcelain? long v verbose u? untracked-files? ignored? ignore-submodules? z column? no-column ahead-behind no-ahead-behind renames no-renames find-renames? M?',
  ),
  log: GIT_LOG,
  whatchanged: GIT_LOG,
  show: GIT_LOG,
  diff: reader(`${DIFF_OPTIONS} cached staged merge-base no-index`, DIFF_WRITES),
  // shortlog's own `-n` and `--committer` are flags, not the log options that take a value.
  shortlog: reader(
    `n numbered s summary e email committer w? group= ${LOG_OPTIONS.replace('n= ', '').replace(' committer= ', ' ')}`,
    LOG_WRITES,
    true,
  ),
  'rev-list': reader(
    `${LOG_OPTIONS} count objects objects-edge no-object-names object-names timestamp header quiet`,
    LOG_WRITES,
    true,
  ),
  describe: reader(
    'all tags contains abbrev? candidates= exact-match debug long match= exclude= always first-parent dirty? broken?',
  ),
  'rev-parse': reader(
    [
      'verify q quiet short? abbrev-ref? symbolic symbolic-full-name show-toplevel show-prefix',
      'show-cdup show-superproject-working-tree git-dir git-common-dir absolute-git-dir',
      'is-inside-git-dir is-inside-work-tree is-bare-repository is-shallow-repository',
      'show-object-format? git-path= all branches? tags? remotes? glob? exclude? default=',
      'revs-only no-revs flags no-flags sq not prefix= local-env-vars shared-index-path',
      'since? after? until? before? path-format? disambiguate?',
    ].join(' '),
  ),
  'ls-files': reader(
    [
      'c cached d deleted m modified o others i ignored s stage u unmerged k killed z t v f',
      'full-name abbrev? debug eol deduplicate x= exclude= X= exclude-from=',
      'exclude-per-directory= exclude-standard error-unmatch with-tree= directory',
      'no-empty-directory resolve-undo format= sparse',
    ].join(' '),
  ),
  'ls-tree': reader(
    'd r t l long z name-only name-status object-only full-name full-tree abbrev? format=',
  ),
  blame: reader(
    [
      'incremental b root show-stats progress no-progress f show-name n show-number p porcelain',
      'line-porcelain c l t s e show-email w M? C? L= S= contents= reverse? first-parent date?',
      'color-lines color-by-age minimal abbrev? ignore-rev= ignore-revs-file= encoding?',
    ].join(' '),
  ),
  grep: {
    ...reader(
      [
        'cached no-index untracked exclude-standard no-exclude-standard',
        'v invert-match i ignore-case w word-regexp a text I r recursive no-recursive max-depth=',
        'E extended-regexp G basic-regexp F fixed-strings P perl-regexp n line-number column H',
        'full-name l files-with-matches name-only L files-without-match z null o only-matching',
        'count color? no-color break heading C= context= B= before-context= A= after-context=',
        'threads= p show-function W function-context f= e= and or not all-match q quiet m=',
        'max-count= no-textconv',
      ].join(' '),
      // `-O` runs its value (or the pager) with a shell on every file that matches.
      'O? open-files-in-pager? textconv ext-grep',
      true,
    ),
    shellOptions: ['O', 'open-files-in-pager'],
  },
  'show-ref': reader(
    'head tags heads branches verify exists d dereference s? hash? abbrev? q quiet',
  ),
  'merge-base': reader('a all octopus independent is-ancestor fork-point'),
  'for-each-ref': reader(
    'count= s shell p perl python tcl sort= format= color? points-at= merged? no-merged? contains? no-contains? ignore-case omit-empty exclude=',
  ),
  // `--textconv` and `--filters` run the filters the repository configures.
  'cat-file': reader(
    't s e p batch? batch-check? batch-command? batch-all-objects buffer follow-symlinks unordered allow-unknown-type Z use-mailmap mailmap',
    'textconv filters',
  ),
  'name-rev': reader('name-only tags refs= exclude= all annotate-stdin no-undefined always'),
  'count-objects': reader('v verbose H human-readable'),
  'check-ignore': reader('q quiet v verbose stdin z n non-matching no-index'),
  version: reader('build-options'),
}

/** The judgement of `git SUBCOMMAND ARGS` for a read-only subcommand. */
export function judgeGitReader(
  subcommand: string,
  gitReader: GitReader,
  args: readonly ShellWord[],
  context: RuleContext,
): CommandFinding {
  const scan = scanOptions(args, [...gitReader.reads, ...gitReader.writes], {
    exactLong: true,
    globsMayBeOptions: true,
    numericOptions: gitReader.numericOptions === true,
  })
  const writing = scan.options.find((option) =>
    gitReader.writes.some((definition) => definition.name === option.name),
  )
  if (writing !== undefined) {
    for (const { name, value } of scan.options) {
      const code = value?.value
      if (code !== undefined && gitReader.shellOptions?.includes(name) === true)
        context.judgeScript(code)
    }
    const option = writing.name.length === 1 ? `-${writing.name}` : `--${writing.name}`
    return jail(`git ${subcommand} ${option} writes a file or runs a program`, 'writes-file')
  }
  const verifying = scan.options.find(
    ({ name, value }) =>
      (name === 'format' || name === 'pretty') &&
      (value?.value === undefined ? value !== undefined : /%G|%\(signature/.test(value.value)),
  )
  if (verifying !== undefined) {
    return jail(
      `git ${subcommand} --${verifying.name}=${verifying.value?.text ?? ''} may verify signatures, which runs gpg`,
      'writes-file',
    )
  }
  const unknown = scan.unknown[0]
  if (unknown !== undefined) {
    return jail(
      `git ${subcommand} ${unknown} is not an option the policy knows to only read (git takes an abbreviated option for the one it abbreviates, so spell options in full)`,
    )
  }
  const expanding = scan.dynamic[0]
  if (expanding !== undefined) {
    return jail(`git ${subcommand}: ${expanding.text} could expand to an option`)
  }
  return { verdict: 'allow', rule: 'read-only', reason: 'git only reads the repository' }
}

function jail(why: string, rule: 'writes-file' | 'confined' = 'confined'): CommandFinding {
  return { verdict: 'jail', rule, reason: `${why}; it runs confined` }
}
