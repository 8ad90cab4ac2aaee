/**
 * `allow` means "runs without a question" under `--approval untrusted`, so it comes only from a
 * closed list. Each row pairs a command that must not be `allow` (with the verdict it gets)
 * with its control: the same command without what makes it dangerous, which stays as it was.
 * Every attack row was `allow` (or, for the last class, `jail`) before the list was closed.
 */
import assert from 'node:assert/strict'
import { after, before, describe, it } from 'node:test'
import type { CommandRule, CommandVerdict } from './command-judgement.ts'
import { CommandPolicy } from './command-policy.ts'

type Row = readonly [
  attack: string,
  verdict: CommandVerdict,
  rule: CommandRule,
  control: string,
  controlVerdict?: CommandVerdict,
]

/** Options (and wrappers) that run a program or write a file. */
const RUNS_OR_WRITES: readonly Row[] = [
  // The pager's code is judged as a part of its own, so the reason names the program it runs.
  ["git grep -O'sh -c id' foo", 'jail', 'confined', 'git grep foo'],
  ["git grep -nO'sh -c id' foo", 'jail', 'confined', 'git grep -n foo'],
  ['git grep -O foo', 'jail', 'writes-file', 'git grep -n -e foo'],
  ['git grep --open-files-in-pager foo', 'jail', 'writes-file', 'git grep --count foo'],
  ['git grep --open-files-in-pager=vim foo', 'jail', 'confined', 'git grep -l foo'],
  ["git grep -O'sudo id' foo", 'deny', 'privilege', 'git grep -w foo'],
  ['git log --output=log.txt', 'jail', 'writes-file', 'git log --oneline'],
  ['git diff --ext-diff', 'jail', 'writes-file', 'git diff --no-ext-diff'],
  ['git log -p --textconv', 'jail', 'writes-file', 'git log -p --no-textconv'],
  ['git log --show-signature', 'jail', 'writes-file', 'git log --graph'],
  ["git log --format='%h %G?'", 'jail', 'writes-file', "git log --format='%h %s'"],
  ['git diff --submodule=diff', 'jail', 'confined', 'git diff --ignore-submodules'],
  ['git grep --recurse-submodules foo', 'jail', 'confined', 'git grep --untracked foo'],
  // Elsewhere git may find a repository committed into the workspace, with its own config.
  ['cd vendor/x.git && git log -p', 'jail', 'confined', 'ls vendor/x.git && git log -p'],
  ['env -C vendor/x.git git log -p', 'jail', 'confined', 'env -C src ls'],
  ['git cat-file --filters HEAD:a', 'jail', 'writes-file', 'git cat-file -p HEAD:a'],
  ['git -p status', 'jail', 'confined', 'git --no-pager status'],
  ['git --paginate log', 'jail', 'confined', 'git -P log'],
  ['git --help', 'jail', 'confined', 'git --version'],
  ['git log --help', 'jail', 'confined', 'git log -h'],
  ['git help log', 'jail', 'confined', 'git version'],
  ['git --namespace=other log', 'jail', 'confined', 'git --no-optional-locks log'],
  ['git reflog show --output=x', 'jail', 'writes-file', 'git reflog show'],
  // shortlog's `-n` is a flag: read as log's `-n NUMBER`, it would hide `--output=x`.
  ['git shortlog -sn --output=x', 'jail', 'writes-file', 'git shortlog -sn'],
  ['git status --frobnicate', 'jail', 'confined', 'git status --short'],
  ['rg --pre ./unzip.sh foo', 'jail', 'writes-file', 'rg foo'],
  ['rg --pre sudo foo', 'deny', 'privilege', 'rg -n foo'],
  ['rg --hostname-bin=./host foo', 'jail', 'writes-file', 'rg -i foo'],
  ['rg -z foo', 'jail', 'writes-file', 'rg -S foo'],
  ['sort --compress-program=gzip a', 'jail', 'writes-file', 'sort -n a'],
  ['sort -T /tmp a', 'jail', 'writes-file', 'sort -u a'],
  ['sort -o out a', 'jail', 'writes-file', 'sort -k 2 a'],
  ['diff -l a b', 'jail', 'writes-file', 'diff -u a b'],
  ['file -z a.gz', 'jail', 'writes-file', 'file a.gz'],
  ['file -p a', 'jail', 'writes-file', 'file -b a'],
  ['tree -o out.txt', 'jail', 'writes-file', 'tree -L 2'],
  // tree reads -L's value from the next word even inside a bundle: `-Lo 2 out` writes `out`.
  ['tree -Lo 2 out', 'jail', 'writes-file', 'tree -La 2'],
  ['date -s 2020-01-01', 'jail', 'writes-file', 'date -d 2020-01-01'],
  ['date 010100002025', 'jail', 'writes-file', 'date +%s'],
  ['uniq in.txt out.txt', 'jail', 'writes-file', 'uniq -c in.txt'],
  ['tail -f log', 'jail', 'confined', 'tail -n 5 log'],
  ['find . -fprint out', 'jail', 'writes-file', 'find . -print'],
  ['find . -newer x -fls out', 'jail', 'writes-file', 'find . -newer x -ls'],
  ['find . -name x -frobnicate', 'jail', 'confined', 'find . -name x -prune'],
  ['time -o t.txt ls', 'jail', 'confined', 'time -p ls'],
  ['nohup ls', 'jail', 'confined', 'nice ls'],
  ['env -i ls', 'jail', 'environment', 'env -C src ls'],
  ['exec -c ls', 'jail', 'environment', 'exec ls'],
  // A name of the command's choosing (argv[0]): git named `git-clean` runs `git clean`.
  ['exec -a git-clean git grep -f .', 'ask', 'unclear-command', 'exec git grep -f .'],
  ['exec -agit-checkout git log -- .', 'ask', 'unclear-command', 'exec -- git log -- .'],
  ['exec -la git-init git status', 'ask', 'unclear-command', 'exec git status'],
  ['exec -l git log', 'ask', 'unclear-command', 'builtin exec git log'],
  ['command exec -a rm ls -rf x', 'ask', 'unclear-command', 'command exec ls -R x'],
  ['exec -a x sudo id', 'deny', 'privilege', 'exec ls'],
  ['setsid -f ls', 'jail', 'confined', 'setsid -w ls'],
  ['busybox ls', 'jail', 'confined', 'ls'],
  ['coproc ls', 'jail', 'confined', 'command ls'],
  ['watch -x ls', 'jail', 'confined', 'timeout 5 ls'],
  ['flock lockfile ls', 'jail', 'confined', 'stdbuf -oL ls'],
  ['script -qc ls /dev/null', 'jail', 'confined', 'ionice -c3 ls'],
]

/** Words that the shell turns into options only when the command runs. */
const EXPANDS_TO_OPTIONS: readonly Row[] = [
  ['sort "$f"', 'jail', 'writes-file', 'cat "$f"'],
  ['sort *', 'jail', 'writes-file', 'sort ./*'],
  ['rg {--pre=./x.sh,foo} .', 'jail', 'writes-file', 'rg foo .'],
  ['xargs sort', 'jail', 'writes-file', 'xargs grep -l foo'],
  ['git log *', 'ask', 'dynamic-argument', 'git log -- "*.ts"'],
  ['find * -name x', 'jail', 'confined', 'find . -name x'],
  ['diff "$a" b', 'jail', 'writes-file', 'diff <(sort a) <(sort b)'],
  ['printf "$fmt" "$x"', 'jail', 'environment', 'printf "%s\\n" "$x"'],
  ['printf *', 'jail', 'environment', "printf '%s\\n' *"],
  ['[ * ]', 'jail', 'environment', '[ -n "$x" ]'],
]

/**
 * Words the shell may make none or several words of, where the policy reads one: an option's
 * value in the next word (`sort -k {1,--output=x}` is `sort -k 1 --output=x`) or the words a
 * wrapper takes before its command (`nice -n {1,touch,x} git log` runs `touch x git log`).
 */
const SPLITS_INTO_WORDS: readonly Row[] = [
  ['sort -k {1,--output=x} a', 'jail', 'writes-file', 'sort -k 1,2 a'],
  ["x='1 --output=f'; sort -k $x a", 'jail', 'writes-file', `x='1'; sort -k "$x" a`],
  ['sort -k {,} -k --output=x a', 'jail', 'writes-file', "sort -k '' -k --output=x a"],
  ["x='a --pre=./x.sh'; rg -e $x .", 'jail', 'writes-file', `x='a'; rg -e "$x" .`],
  ["x='in out'; uniq -f $x", 'jail', 'writes-file', 'uniq -f 1 in'],
  ['git log --author {,} --grep --output=x', 'ask', 'dynamic-argument', 'git log --author x'],
  ['shopt -s nullglob; git log --author x* --grep --output=y', 'jail', 'confined', 'git log'],
  ['nice -n {1,touch,x} git log', 'ask', 'unclear-command', 'nice -n 1 git log'],
  ["n='1 touch x'; nice -n $n git log", 'ask', 'unclear-command', `n=1; nice -n "$n" git log`],
  ['timeout {5,touch,x} git log', 'ask', 'unclear-command', 'timeout 5 git log'],
  ['timeout -s {TERM,5,touch,x} 5 ls', 'ask', 'unclear-command', 'timeout -s TERM 5 ls'],
  ['stdbuf -o {L,touch,x} ls', 'ask', 'unclear-command', 'stdbuf -o L ls'],
  ['env v=$x git log', 'ask', 'unclear-command', 'env v="$x" git log'],
  ['sudo -u {a,b} id', 'deny', 'privilege', 'id -u'],
  // The rules that ask before git destroys work read the words as written.
  ['git reset {--soft,--hard}', 'ask', 'dynamic-argument', 'git reset --soft HEAD', 'jail'],
  ['git clean {-q,-f}', 'ask', 'dynamic-argument', 'git clean -q', 'jail'],
  ['git checkout {main,-f}', 'ask', 'dynamic-argument', 'git checkout main', 'jail'],
  ['git stash {list,clear}', 'ask', 'dynamic-argument', 'git stash list', 'jail'],
  ['find . -maxdepth {1,-delete}', 'ask', 'dynamic-argument', 'find . -maxdepth 1'],
  ['find . -name {x,-delete}', 'ask', 'dynamic-argument', "find . -name '{x,-delete}'"],
  ['find . -newer {x,-fprint,y}', 'ask', 'dynamic-argument', 'find . -newer x -print'],
  // Where a shell, eval or trap finds its code.
  ["bash {-c,'git reset --hard'}", 'ask', 'dynamic-code', "bash -c 'git status'", 'jail'],
  ["bash {-xc,'git reset --hard'}", 'ask', 'dynamic-code', "bash -xc 'git status'", 'jail'],
  ['echo x | bash {-s,}', 'ask', 'dynamic-code', 'echo x | bash -s', 'ask'],
  ["eval git push x{,' --force'}", 'deny', 'dynamic-eval', "eval 'git status'", 'jail'],
  ["trap {'touch x',} EXIT", 'ask', 'dynamic-code', "trap 'touch x' EXIT", 'jail'],
  // Any of these could be `set -o posix` or `shopt -s extglob`.
  ['set {-o,} posix', 'deny', 'ambiguous-syntax', 'set -- {-o,} posix'],
  ['set -o {posix,}', 'deny', 'ambiguous-syntax', 'set -o pipefail'],
  ['shopt {-s,} extglob', 'deny', 'ambiguous-syntax', 'shopt -s nullglob'],
  ['shopt -s {extglob,}', 'deny', 'ambiguous-syntax', 'shopt -s dotglob'],
]

/** Abbreviated long options: git and GNU programs take any unambiguous prefix. */
const ABBREVIATED: readonly Row[] = [
  ['git log --out=log.txt', 'jail', 'confined', 'git log --oneline'],
  ['git diff --outp=x', 'jail', 'confined', 'git diff --stat'],
  ['git show --outpu=x HEAD', 'jail', 'confined', 'git show --name-only HEAD'],
  ['git grep --open foo', 'jail', 'confined', 'git grep --count foo'],
  ['git grep --open-files=vim foo', 'jail', 'confined', 'git grep --heading foo'],
  ['git grep --ext foo', 'jail', 'confined', 'git grep --break foo'],
  ['git diff --ext', 'jail', 'confined', 'git diff --exit-code'],
  ['sort --out=x a', 'jail', 'confined', 'sort --reverse a'],
  ['sort --compress=gzip a', 'jail', 'confined', 'sort --numeric-sort a'],
  ['sort --temp=/tmp a', 'jail', 'confined', 'sort --unique a'],
  ['rg --pr=./x foo', 'jail', 'confined', 'rg --line-number foo'],
  ['diff --pag a b', 'jail', 'confined', 'diff --unified a b'],
  ['date --se=2020-01-01', 'jail', 'confined', 'date --utc'],
  ['ls --al', 'jail', 'confined', 'ls --all'],
  ['git reset --har', 'deny', 'git-destroys-work', 'git reset --soft HEAD~1', 'jail'],
  ['git reset --mer', 'ask', 'git-discards-changes', 'git reset --mixed', 'jail'],
  ['git clean --fo', 'ask', 'git-discards-changes', 'git clean --dry-run', 'jail'],
  ['git checkout --forc main', 'ask', 'git-discards-changes', 'git checkout main', 'jail'],
  ['git switch --disc main', 'ask', 'git-discards-changes', 'git switch main', 'jail'],
  ['git restore --sta .', 'ask', 'git-discards-changes', 'git restore --staged .', 'jail'],
  ['git gc --pru=now', 'ask', 'git-discards-changes', 'git gc --auto', 'jail'],
]

/** Builtins that set variables the next command obeys, and names the shell evaluates. */
const SETS_VARIABLES: readonly Row[] = [
  [
    'printf -v GIT_CONFIG_KEY_0 core.fsmonitor; git status',
    'jail',
    'environment',
    'printf -v key core.fsmonitor; git status',
  ],
  ['read GIT_CONFIG_KEY_0 <<< x; git status', 'jail', 'environment', 'read key <<< x; git status'],
  ['read -r -a GIT_CONFIG_KEY_0 < f; git status', 'jail', 'environment', 'read -r -a keys < f'],
  ['mapfile -t GIT_CONFIG_KEY_0 < f; git status', 'jail', 'environment', 'mapfile -t lines < f'],
  ['readarray GIT_CONFIG_VALUE_0 < f; git log', 'jail', 'environment', 'readarray lines < f'],
  ['declare GIT_CONFIG_COUNT=3; git status', 'jail', 'environment', 'declare count=3; git status'],
  ['declare -x PAGER=sh; git log', 'jail', 'environment', 'declare -x pager=less; git log'],
  ['export GIT_CONFIG_VALUE_0=x; git status', 'jail', 'environment', 'export value=x; git status'],
  ['export -p GIT_CONFIG_VALUE_0=x; git log', 'jail', 'environment', 'declare -p GIT_DIR; git log'],
  ['typeset GIT_CONFIG_KEY_1=a; git status', 'jail', 'environment', 'typeset key=a; git status'],
  ['readonly GIT_CONFIG_KEY_1=a; git log', 'jail', 'environment', 'readonly key=a; git log'],
  ['f() { local GIT_DIR=x; git log; }', 'jail', 'environment', 'f() { local d=x; git log; }'],
  [
    'declare -n ref=GIT_CONFIG_KEY_0; ref=core.pager; git status',
    'jail',
    'environment',
    'declare ref=x; ref=y; git status',
  ],
  ['declare -i n; read n < f', 'jail', 'environment', 'declare n; read n < f'],
  ['getopts ab GIT_DIR; git log', 'jail', 'environment', 'getopts ab opt; git log'],
  [
    'for GIT_CONFIG_KEY_0 in core.fsmonitor; do git status; done',
    'jail',
    'environment',
    'for key in core.fsmonitor; do git status; done',
  ],
  ['select GIT_DIR in a b; do git log; done', 'jail', 'environment', 'select d in a; do ls; done'],
  [': {GIT_CONFIG_COUNT}<f; git status', 'jail', 'environment', ': {fd}<f; git status'],
  ['let GIT_CONFIG_COUNT=3; git status', 'jail', 'environment', 'let count=3; git status'],
  ['wait -p GIT_DIR; git log', 'jail', 'environment', 'wait -p pid; git log'],
  ['unset GIT_CONFIG_GLOBAL; git status', 'jail', 'environment', 'unset x; git status'],
  ['set -a; x=1; git status', 'jail', 'environment', 'set -euo pipefail; git status'],
  ['set -o allexport; x=1; ls', 'jail', 'environment', 'set -o pipefail; ls'],
  ['shopt -s extdebug; ls', 'jail', 'environment', 'shopt -s globstar; ls'],
  ['RIPGREP_CONFIG_PATH=./rc rg foo', 'jail', 'environment', 'LC_ALL=C rg foo'],
  ['export RIPGREP_CONFIG_PATH=./rc; rg foo', 'jail', 'environment', 'export LANG=C; rg foo'],
  ['EDITOR=./x; git log', 'jail', 'environment', 'editor=./x; git log'],
  ['env -u GIT_CONFIG_GLOBAL git status', 'deny', 'git-outside-workspace', 'env -u x git status'],
  [
    'xargs --process-slot-var=GIT_DIR git log',
    'deny',
    'git-outside-workspace',
    'xargs git log',
    'ask',
  ],
  ['printf -v "$name" x; git status', 'jail', 'environment', 'printf "%s" "$name"; git status'],
  ['read "$name" < f', 'jail', 'environment', 'read -r name < f'],
  ["read 'a[$(touch x)]' <<< 1", 'jail', 'confined', "read 'a[1]' <<< 1"],
  ["read 'a[$(sudo id)]' <<< 1", 'deny', 'privilege', "read 'a[0]' <<< 1"],
  ["printf -v 'a[$(touch x)]' y", 'jail', 'confined', "printf -v 'a[0]' y"],
  ["printf -v 'a[i]' y", 'jail', 'environment', 'printf -v a y'],
  ["test -v 'a[$(touch x)]'", 'jail', 'confined', 'test -v a'],
  ["[ -v 'a[$(touch x)]' ]", 'jail', 'confined', '[ -v a ]'],
  ['[ -v "$name" ]', 'jail', 'environment', '[ -n "$name" ]'],
  ['[[ -v a[$i] ]]', 'jail', 'confined', '[[ -v a[1] ]]'],
  ["declare -a a='([$(touch x)]=1)'", 'jail', 'environment', 'declare -a a=(1 2)'],
  ['a=(1); declare a="$v"', 'jail', 'environment', 'a=(1); a="$v"'],
  ["unset 'a[$(touch x)]'", 'jail', 'confined', "unset 'a[1]'"],
  ["let 'a[$(touch x)]=1'", 'jail', 'confined', 'let a=1'],
  ['mapfile -C "touch x" -c 1 lines < f', 'jail', 'confined', 'mapfile -c 1 lines < f'],
  ['mapfile -C "sudo id" lines < f', 'deny', 'privilege', 'mapfile lines < f'],
]

/** Arithmetic evaluates a variable's value, and with it any `a[$(…)]` the value holds. */
const EVALUATES_VALUES: readonly Row[] = [
  ['read -r n < f; echo $((n + 1))', 'jail', 'confined', 'read -r n < f; echo $((1 + 1))'],
  ['echo "$((n))"', 'jail', 'confined', 'echo "$(($# + 1))"'],
  ['((n++))', 'jail', 'confined', '((1))'],
  ['for ((i = 0; i < n; i++)); do :; done', 'jail', 'confined', 'for i in 1 2; do :; done'],
  ['echo "${s:n}"', 'jail', 'confined', 'echo "${s:1:2}"'],
  ['echo "${a[n]}"', 'jail', 'confined', 'echo "${a[1]}" "${a[@]}"'],
  ['echo "${!name}"', 'jail', 'confined', 'echo "${!prefix*}"'],
  ['[[ $n -eq 1 ]]', 'jail', 'confined', '[[ $n == 1 ]]'],
  ['[ "$n" -eq 1 ]', 'allow', 'read-only', '[[ $# -eq 1 ]]'],
  ['a[n]=1', 'jail', 'environment', 'a[1]=1'],
  ['let m=n', 'jail', 'environment', 'let m=1+2'],
  ['let n++', 'jail', 'environment', 'let n=0'],
  ['echo "${x@P}"', 'jail', 'confined', 'echo "${x@Q}"'],
]

/** git that destroys uncommitted work or history: a person decides, like `git checkout .`. */
const DESTROYS_WORK: readonly Row[] = [
  ['git read-tree -u --reset HEAD', 'ask', 'git-discards-changes', 'git read-tree -n HEAD', 'jail'],
  ['git read-tree --reset HEAD', 'ask', 'git-discards-changes', 'git ls-tree HEAD'],
  [
    'git read-tree -m -u HEAD',
    'ask',
    'git-discards-changes',
    'git read-tree --dry-run -m HEAD',
    'jail',
  ],
  ['git checkout-index -a -f', 'ask', 'git-discards-changes', 'git checkout-index -a', 'jail'],
  ['git checkout-index -af', 'ask', 'git-discards-changes', 'git checkout-index -a -u', 'jail'],
  ['git checkout-index --force --all', 'ask', 'git-discards-changes', 'git ls-files', 'allow'],
  ['git reset --merge', 'ask', 'git-discards-changes', 'git reset --soft HEAD~1', 'jail'],
  ['git reset --keep HEAD~1', 'ask', 'git-discards-changes', 'git reset HEAD~1', 'jail'],
  ['git rm -r .', 'ask', 'git-discards-changes', 'git rm -r src', 'jail'],
  ['git rm -rf src', 'ask', 'git-discards-changes', 'git rm --cached -r src', 'jail'],
  ['git rm "*"', 'ask', 'git-discards-changes', 'git rm --cached "*"', 'jail'],
  [
    'git update-ref -d refs/heads/x',
    'ask',
    'git-discards-changes',
    'git update-ref refs/heads/x HEAD',
    'jail',
  ],
  ['git update-ref --stdin < cmds', 'ask', 'git-discards-changes', 'git show-ref', 'allow'],
  ['git stash; git update-ref -d refs/stash', 'ask', 'git-discards-changes', 'git stash', 'jail'],
  ['git gc --prune=now', 'ask', 'git-discards-changes', 'git gc', 'jail'],
  ['git prune', 'ask', 'git-discards-changes', 'git prune -n', 'jail'],
  ['git repack -a -d', 'ask', 'git-discards-changes', 'git repack -d', 'jail'],
  ['git branch -D topic', 'ask', 'git-discards-changes', 'git branch -d topic', 'jail'],
  ['git branch -d -f topic', 'ask', 'git-discards-changes', 'git branch topic', 'jail'],
  ['git branch -M main', 'ask', 'git-discards-changes', 'git branch -m old new', 'jail'],
  ['git tag -d v1', 'ask', 'git-discards-changes', 'git tag v1', 'jail'],
  ['git reflog expire --expire=now --all', 'ask', 'git-discards-changes', 'git reflog'],
  ['git reflog delete HEAD@{1}', 'ask', 'git-discards-changes', 'git reflog show HEAD'],
  ['git symbolic-ref -d HEAD', 'ask', 'git-discards-changes', 'git symbolic-ref HEAD', 'jail'],
  [
    'git worktree remove --force wt',
    'ask',
    'git-discards-changes',
    'git worktree remove wt',
    'jail',
  ],
  ['git filter-branch --tree-filter x HEAD', 'ask', 'git-discards-changes', 'git log HEAD'],
  ['git replace a b', 'ask', 'git-discards-changes', 'git replace -l', 'jail'],
  ['git merge --abort', 'ask', 'git-discards-changes', 'git merge topic', 'jail'],
  ['git rebase --abort', 'ask', 'git-discards-changes', 'git rebase main', 'jail'],
  ['git cherry-pick --skip', 'ask', 'git-discards-changes', 'git cherry-pick abc', 'jail'],
  ['git checkout --force main', 'ask', 'git-discards-changes', 'git checkout main', 'jail'],
  ['git switch -f main', 'ask', 'git-discards-changes', 'git switch main', 'jail'],
  ['git stash clear', 'ask', 'git-discards-changes', 'git stash pop', 'jail'],
]

describe('allow comes only from a closed list', () => {
  let policy: CommandPolicy
  before(async () => {
    policy = await CommandPolicy.load()
  })
  after(() => policy.close())

  const classes = {
    'options that run a program or write a file': RUNS_OR_WRITES,
    'words that expand to options': EXPANDS_TO_OPTIONS,
    'words the shell may split': SPLITS_INTO_WORDS,
    'abbreviated long options': ABBREVIATED,
    'builtins that set variables': SETS_VARIABLES,
    'arithmetic on values': EVALUATES_VALUES,
    'git that destroys work or history': DESTROYS_WORK,
  }
  for (const [name, rows] of Object.entries(classes)) {
    describe(name, () => {
      for (const [attack, verdict, rule, control, controlVerdict = 'allow'] of rows) {
        it(`${verdict} (${rule}): ${JSON.stringify(attack)}; control ${controlVerdict}: ${JSON.stringify(control)}`, () => {
          const judgement = policy.judge(attack)
          assert.deepEqual(
            { verdict: judgement.verdict, rule: judgement.rule },
            { verdict, rule },
            `${attack}: ${judgement.reason}`,
          )
          const controlled = policy.judge(control)
          assert.equal(controlled.verdict, controlVerdict, `${control}: ${controlled.reason}`)
        })
      }
    })
  }
})
