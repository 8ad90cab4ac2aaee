/**
 * The closed list, tried for real: each command below was judged `allow` (or `jail`, for the
 * git that destroys work) before it, and bash and git run it here, in a repository with the
 * jail's environment (its GIT_CONFIG_* among it), to show that it does run a program, write a
 * file or destroy work. Each has a positive control: the same command without what makes it
 * dangerous does nothing of the kind, and the policy still lets it run without a question.
 */
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import fs from 'node:fs/promises'
import os from 'node:os'
import path from 'node:path'
import { after, before, describe, it } from 'node:test'
import { promisify } from 'node:util'
import { jailEnvironment } from '../../bubblewrap/jail-environment.ts'
import type { CommandVerdict } from './command-judgement.ts'
import { CommandPolicy } from './command-policy.ts'

const run = promisify(execFile)

/** Committed content of the repository's file, and what a test changes it to. */
const COMMITTED = 'foo\n'
const CHANGED = 'foo\nuncommitted work\n'

interface Attack {
  readonly attack: string
  readonly control: string
  /** The verdict the attack gets now (`allow` before the fix, `jail` for destroyed work). */
  readonly verdict: CommandVerdict
  /** What the control gets. */
  readonly controlVerdict?: CommandVerdict
  /**
   * What the attack does: a file `pwned` appears, the uncommitted change is lost, a branch
   * `pwned` appears, or the untracked file `draft.txt` is removed.
   */
  readonly harm: 'runs-or-writes' | 'destroys-work' | 'makes-branch' | 'removes-untracked'
  /** Files to create before running (name, content). */
  readonly files?: Readonly<Record<string, string>>
  /** Shell run before the command to stage or change things (`git add`). */
  readonly prepare?: string
}

const FSMONITOR = `core.fsmonitor`
const PAYLOAD = `'touch pwned; false'`

const ATTACKS: readonly Attack[] = [
  {
    attack: "git grep -O'touch pwned #' foo",
    control: 'git grep foo',
    verdict: 'jail',
    harm: 'runs-or-writes',
  },
  {
    attack: "git grep -nO'touch pwned #' foo",
    control: 'git grep -n foo',
    verdict: 'jail',
    harm: 'runs-or-writes',
  },
  {
    attack: "git grep --open-files-in-pager='touch pwned #' foo",
    control: 'git grep --count foo',
    verdict: 'jail',
    harm: 'runs-or-writes',
  },
  {
    attack: `printf -v GIT_CONFIG_KEY_0 ${FSMONITOR}; printf -v GIT_CONFIG_VALUE_0 ${PAYLOAD}; git status`,
    control: `printf -v key ${FSMONITOR}; printf -v value ${PAYLOAD}; git status`,
    verdict: 'jail',
    harm: 'runs-or-writes',
  },
  {
    attack: `read GIT_CONFIG_KEY_0 <<< ${FSMONITOR}; read -r GIT_CONFIG_VALUE_0 <<< ${PAYLOAD}; git status`,
    control: `read key <<< ${FSMONITOR}; read -r value <<< ${PAYLOAD}; git status`,
    verdict: 'jail',
    harm: 'runs-or-writes',
  },
  {
    attack: `declare -n k=GIT_CONFIG_KEY_0 v=GIT_CONFIG_VALUE_0; k=${FSMONITOR}; v=${PAYLOAD}; git status`,
    control: `declare k=GIT_CONFIG_KEY_0 v=GIT_CONFIG_VALUE_0; k=${FSMONITOR}; v=${PAYLOAD}; git status`,
    verdict: 'jail',
    harm: 'runs-or-writes',
  },
  {
    attack: `for GIT_CONFIG_KEY_0 in ${FSMONITOR}; do for GIT_CONFIG_VALUE_0 in ${PAYLOAD}; do git status; done; done`,
    control: `for key in ${FSMONITOR}; do for value in ${PAYLOAD}; do git status; done; done`,
    verdict: 'jail',
    harm: 'runs-or-writes',
  },
  {
    attack: "read 'a[$(touch pwned)]' <<< 1",
    control: "read 'a[1]' <<< 1",
    verdict: 'jail',
    harm: 'runs-or-writes',
  },
  {
    attack: "printf -v 'a[$(touch pwned)]' x",
    control: "printf -v 'a[0]' x",
    verdict: 'jail',
    harm: 'runs-or-writes',
  },
  {
    attack: "test -v 'a[$(touch pwned)]'",
    control: 'test -v a',
    verdict: 'jail',
    harm: 'runs-or-writes',
  },
  {
    attack: "declare -a a='([$(touch pwned)]=1)'",
    control: 'declare -a a=(1 2)',
    verdict: 'jail',
    harm: 'runs-or-writes',
  },
  {
    attack: 'read -r n < n.txt; echo $((n))',
    control: 'read -r n < n.txt; echo "$n"',
    verdict: 'jail',
    harm: 'runs-or-writes',
    files: { 'n.txt': 'a[$(touch pwned)]\n' },
  },
  {
    attack: 'read -r n < n.txt; let m=n',
    control: 'read -r n < n.txt; let m=1',
    verdict: 'jail',
    harm: 'runs-or-writes',
    files: { 'n.txt': 'a[$(touch pwned)]\n' },
  },
  {
    attack: 'read -r p < p.txt; echo "${p@P}"',
    control: 'read -r p < p.txt; echo "${p@Q}"',
    verdict: 'jail',
    harm: 'runs-or-writes',
    files: { 'p.txt': '$(touch pwned)\n' },
  },
  {
    attack: 'read -r n < n.txt; [[ $n -eq 1 ]]',
    control: 'read -r n < n.txt; [[ $n == 1 ]]',
    verdict: 'jail',
    harm: 'runs-or-writes',
    files: { 'n.txt': 'a[$(touch pwned)]\n' },
  },
  {
    // The shell expands `*` to a file named `--output=pwned`, which sort obeys.
    attack: 'sort *',
    control: 'sort ./*',
    verdict: 'jail',
    harm: 'runs-or-writes',
    files: { '--output=pwned': 'x\n' },
  },
  {
    attack: 'find . -name notes.txt -fprint pwned',
    control: 'find . -name notes.txt -print',
    verdict: 'jail',
    harm: 'runs-or-writes',
  },
  // git's parse-options takes the next word as a value whatever it looks like: the format is
  // `--list`, and the name makes a branch.
  {
    attack: 'git branch --format --list pwned',
    control: "git branch --format '%(refname)' --list pwned",
    verdict: 'jail',
    harm: 'makes-branch',
  },
  {
    attack: 'git branch --format -l pwned HEAD',
    control: "git branch --format '%(refname)' -l pwned HEAD",
    verdict: 'jail',
    harm: 'makes-branch',
  },
  // A word the shell makes several words of, or none, where the policy read one: an option's
  // value (the words after it are read out of place) or the words before a wrapper's command.
  {
    attack: 'nice -n {1,touch,pwned} git log',
    control: 'nice -n 1 git log',
    verdict: 'ask',
    harm: 'runs-or-writes',
  },
  {
    attack: "n='1 touch pwned'; nice -n $n git log",
    control: `n='1 touch pwned'; nice -n "$n" git log`,
    verdict: 'ask',
    harm: 'runs-or-writes',
  },
  {
    attack: 'timeout {5,touch,pwned} git log',
    control: 'timeout 5 git log',
    verdict: 'ask',
    harm: 'runs-or-writes',
  },
  {
    attack: "k='1 --output=pwned'; sort -k $k notes.txt",
    control: `k='1 --output=pwned'; sort -k "$k" notes.txt`,
    verdict: 'jail',
    harm: 'runs-or-writes',
  },
  {
    attack: 'git log --author {,} --grep --output=pwned',
    control: "git log --author '' --grep --output=pwned",
    verdict: 'ask',
    harm: 'runs-or-writes',
  },
  {
    attack: 'git clean {-q,-f}',
    control: 'git clean -q',
    verdict: 'ask',
    controlVerdict: 'jail',
    harm: 'removes-untracked',
    files: { 'draft.txt': 'not yet added\n' },
  },
  {
    attack: 'find . -name {notes.txt,-delete}',
    control: 'find . -name notes.txt',
    verdict: 'ask',
    harm: 'destroys-work',
  },
  // A brace among find's starting points writes the expression as well: `find . '' -delete`.
  {
    attack: 'find . {"",-delete}',
    control: 'find . -name notes.txt',
    verdict: 'ask',
    harm: 'destroys-work',
  },
  // git takes the name it is called by (argv[0]) for its subcommand: named `git-clean`, the
  // words `grep -f .` are `git clean -f grep .`; named `git-checkout`, `log -- .` checks out
  // the branch `log` over the work.
  {
    attack: 'exec -a git-clean git grep -f .',
    control: 'exec git grep -f .',
    verdict: 'ask',
    harm: 'removes-untracked',
    files: { 'draft.txt': 'not yet added\n' },
  },
  {
    attack: 'exec -a git-checkout git log -- .',
    control: 'exec git log -- .',
    verdict: 'ask',
    harm: 'destroys-work',
    prepare: 'git branch log',
  },
  // Redirections with no simple command of their own: a function's are opened at each call,
  // and `$(>file)` opens its file like `>file`.
  {
    attack: 'cat() { echo data; } > notes.txt; cat',
    control: 'cat() { echo data; } < notes.txt; cat',
    verdict: 'jail',
    harm: 'destroys-work',
  },
  {
    attack: 'ls() { :; } 2> pwned; ls',
    control: 'ls() { :; }; ls',
    verdict: 'jail',
    harm: 'runs-or-writes',
  },
  {
    attack: 'echo $(> notes.txt)',
    control: 'echo $(< notes.txt)',
    verdict: 'jail',
    harm: 'destroys-work',
  },
  {
    attack: 'x="$(2>pwned)"',
    control: 'x="$(2>/dev/null)"',
    verdict: 'jail',
    harm: 'runs-or-writes',
  },
  // $'…' as bash decodes it: an octal escape keeps one byte (`\455` is `-`), and `\c@` is a
  // NUL, which ends the word.
  {
    attack: "git log $'\\455\\455output=pwned'",
    control: "git log $'\\055\\055oneline'",
    verdict: 'jail',
    harm: 'runs-or-writes',
  },
  {
    attack: "sort $'\\455o' pwned notes.txt",
    control: "sort $'\\055r' notes.txt",
    verdict: 'jail',
    harm: 'runs-or-writes',
  },
  {
    attack: "git $'clean\\c@' -f",
    control: "git $'clean' -q",
    verdict: 'ask',
    controlVerdict: 'jail',
    harm: 'removes-untracked',
    files: { 'draft.txt': 'not yet added\n' },
  },
  // xargs replaces the string of its last -I/-i/--replace, in every argument after the
  // program's name; one only known at run time may be in any of them.
  {
    attack: 'echo --output=pwned | xargs -i -I Y git log Y',
    control: 'echo --output=pwned | xargs -I Y -i git log Y',
    verdict: 'ask',
    harm: 'runs-or-writes',
  },
  {
    attack: 'echo --output=pwned | xargs --replace -I Y git log Y',
    control: 'echo --output=pwned | xargs -I Y --replace git log Y',
    verdict: 'ask',
    harm: 'runs-or-writes',
  },
  {
    attack: 't=Y; echo --output=pwned | xargs -I "$t" git log Y',
    control: 'echo --output=pwned | xargs -I X git log Y',
    verdict: 'ask',
    harm: 'runs-or-writes',
  },
  // A later -n (but -n 1), -L or -l turns replacing off: xargs adds what it reads instead.
  {
    attack: 'echo --output=pwned | xargs -I Y -n 2 git log',
    control: 'echo --output=pwned | xargs -n 2 -I Y git log',
    verdict: 'ask',
    harm: 'runs-or-writes',
  },
  {
    attack: 'echo --output=pwned | xargs -i -L 1 git log',
    control: 'echo --output=pwned | xargs -L 1 -i git log',
    verdict: 'ask',
    harm: 'runs-or-writes',
  },
  // flock's long options take values too, and a brace makes two words of its lock file.
  {
    attack: 'flock --timeout 5 lock git clean -f',
    control: 'flock -w 5 lock git clean -q',
    verdict: 'ask',
    controlVerdict: 'jail',
    harm: 'removes-untracked',
    files: { 'draft.txt': 'not yet added\n' },
  },
  {
    attack: 'flock {lock,git} clean -f',
    control: 'flock lock git clean -q',
    verdict: 'ask',
    controlVerdict: 'jail',
    harm: 'removes-untracked',
    files: { 'draft.txt': 'not yet added\n' },
  },
  // bash named `-bash` is a login shell, which runs the profile in its home (the jail's /tmp,
  // which the commands before wrote): renaming asks whatever program it renames.
  {
    attack: 'exec -l bash -c true',
    control: 'exec bash -c true',
    verdict: 'ask',
    controlVerdict: 'jail',
    harm: 'runs-or-writes',
    prepare: "echo 'touch pwned' > ~/.bash_profile",
  },
  // coreutils' env reads a lone `-` as `-i`: what follows is the command.
  {
    attack: 'env - git clean -f',
    control: 'env - git clean -q',
    verdict: 'ask',
    controlVerdict: 'jail',
    harm: 'removes-untracked',
    files: { 'draft.txt': 'not yet added\n' },
  },
  {
    attack: 'git read-tree -u --reset HEAD',
    control: 'git ls-tree HEAD',
    verdict: 'ask',
    harm: 'destroys-work',
  },
  {
    attack: 'git checkout-index -a -f',
    control: 'git checkout-index -a',
    verdict: 'ask',
    controlVerdict: 'jail',
    harm: 'destroys-work',
  },
  {
    attack: 'git reset --merge',
    control: 'git reset --soft HEAD',
    verdict: 'ask',
    controlVerdict: 'jail',
    harm: 'destroys-work',
    prepare: 'git add notes.txt',
  },
  // git stops reading its options at `-h` and runs `git help log`: man, or the viewer the
  // repository's configuration names (here the person's own `man.pwn.cmd`).
  {
    attack: 'git -h log',
    control: 'git -h',
    verdict: 'jail',
    harm: 'runs-or-writes',
    prepare: "git config man.viewer pwn && git config man.pwn.cmd 'touch pwned; true'",
  },
]

describe('commands that were allow, run for real', () => {
  let policy: CommandPolicy
  let scratch: string
  before(async () => {
    policy = await CommandPolicy.load()
    scratch = await fs.mkdtemp(path.join(os.tmpdir(), 'eitri-allow-attacks-'))
  })
  after(async () => {
    policy.close()
    await fs.rm(scratch, { recursive: true, force: true })
  })

  let count = 0
  /** A fresh repository with `notes.txt` committed and then changed, and bash in it. */
  async function repository(attack: Attack): Promise<(command: string) => Promise<string>> {
    count += 1
    const root = path.join(scratch, String(count))
    const home = path.join(root, 'home')
    const workspace = path.join(root, 'workspace')
    await fs.mkdir(home, { recursive: true })
    await fs.mkdir(workspace)
    const env = { ...jailEnvironment(), HOME: home, TMPDIR: home }
    const bash = async (command: string): Promise<string> => {
      const result = await run('bash', ['-c', command], { cwd: workspace, env }).catch(
        (error: { stdout?: string }) => ({ stdout: error.stdout ?? '' }),
      )
      return result.stdout
    }
    await fs.writeFile(path.join(workspace, 'notes.txt'), COMMITTED)
    await bash('git init -q . && git add notes.txt && git commit -qm notes')
    await fs.writeFile(path.join(workspace, 'notes.txt'), CHANGED)
    for (const [name, content] of Object.entries(attack.files ?? {}))
      await fs.writeFile(path.join(workspace, name), content)
    if (attack.prepare !== undefined) await bash(attack.prepare)
    return bash
  }

  async function harmDone(attack: Attack, command: string): Promise<boolean> {
    const bash = await repository(attack)
    await bash(command)
    if (attack.harm === 'runs-or-writes') return (await bash('ls -A')).split('\n').includes('pwned')
    if (attack.harm === 'removes-untracked')
      return !(await bash('ls -A')).split('\n').includes('draft.txt')
    if (attack.harm === 'makes-branch')
      return (await bash("git for-each-ref --format='%(refname)' refs/heads/pwned")) !== ''
    return (await bash('cat notes.txt')) !== CHANGED
  }

  for (const attack of ATTACKS) {
    const controlVerdict = attack.controlVerdict ?? 'allow'
    it(`${attack.verdict}: ${attack.attack} (control ${controlVerdict}: ${attack.control})`, async () => {
      assert.equal(
        await harmDone(attack, attack.attack),
        true,
        `the attack did no harm: ${attack.attack}`,
      )
      assert.equal(
        await harmDone(attack, attack.control),
        false,
        `the control did harm: ${attack.control}`,
      )
      const judged = policy.judge(attack.attack)
      assert.equal(judged.verdict, attack.verdict, `${attack.attack}: ${judged.reason}`)
      const controlled = policy.judge(attack.control)
      assert.equal(controlled.verdict, controlVerdict, `${attack.control}: ${controlled.reason}`)
    })
  }
})
