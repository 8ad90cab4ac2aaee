/**
 * @module access/command-policy/command-judgement
 * What the command policy answers: a verdict per simple command found anywhere in a shell
 * command, and the most severe of them for the whole.
 */

import type {
  CommandFinding as Finding,
  CommandJudgement as Judgement,
  CommandPart as Part,
  CommandVerdict,
} from '../../ports/access-context.ts'

export type { CommandVerdict }

/**
 * The rule that decided a verdict: a stable code to branch on (never branch on `reason`).
 *
 * allow (only from a closed list: readers.ts, git-read-only.ts):
 * - `empty`: nothing runs (an empty command, comments only).
 * - `read-only`: a listed program with only listed options, spelled in full; an assignment
 *   or builtin that sets only harmless variables (lowercase names); a test.
 *
 * jail:
 * - `confined`: any other program, option, or abbreviation of one (`git log --out=f`), a
 *   program named by a path (`./cat`), or arithmetic on a variable (`$((n))`, which runs a
 *   command hidden in the value); it runs confined.
 * - `writes-file`: a read-only program told to write a file or run a program (`cat a > b`,
 *   `sort -o f`, `git grep -O…`, `rg --pre x`), or given a word that could become such an
 *   option (`sort "$f"`, `sort *`).
 * - `environment`: sets or unsets a variable that is not known harmless (`PATH`,
 *   `GIT_CONFIG_KEY_0`, `PAGER`, …), by assignment or builtin (`read`, `printf -v`,
 *   `declare -n`, `env -u`), or changes how the shell runs later commands (`set -a`).
 *
 * ask:
 * - `workspace-wipe`: a recursive delete of the whole workspace (`rm -rf .`, `rm -rf *`).
 * - `git-discards-changes`: git that throws away uncommitted work or history (`git clean -f`,
 *   `git checkout .`, `git reset --merge`, `git read-tree -u`, `git branch -D`,
 *   `git update-ref -d`, `git gc --prune=now`, …; rules/git-destructive.ts).
 * - `dynamic-command`: the program's name is only known when it runs (`$CMD`, `$(…)`, a glob).
 * - `dynamic-argument`: an argument that decides the verdict is only known when it runs.
 * - `dynamic-code`: a shell would run code the policy cannot read (`bash -c "$X"`, `… | bash`).
 * - `unclear-command`: a wrapper option the policy does not know hides which program runs.
 * - `escalation`: the command asks for wider access than the jail gives.
 *
 * deny:
 * - `privilege`: sudo, su, doas, pkexec, run0.
 * - `disk`: formatting, partitioning or writing disks (dd, mkfs, fdisk, `> /dev/sda`, …).
 * - `power`: reboot, shutdown, halt, poweroff, init, `systemctl reboot`, ….
 * - `system-delete`: a recursive delete, chmod or chown of `/`, a home or a system folder.
 * - `git-outside-workspace`: git that reaches a remote or another repository (push, fetch,
 *   clone, remote, submodule, config, `-C`, `--git-dir`, `-c`, …).
 * - `git-destroys-work`: `reset --hard`, a forced push, `clean -f` with `-d`, `-x` or `-X`.
 * - `download-to-shell`: a download run as code (`curl … | sh`, `bash <(curl …)`).
 * - `dynamic-eval`: eval, source or `.` of code or a file not written in the command.
 * - `unparseable`: the command is not valid shell.
 * - `ambiguous-syntax`: bash could read the command otherwise than the policy's parser (a
 *   here-document delimiter that is not a plain word, `\v` or a Unicode space between words,
 *   quotes inside `${…}`, …), so a command bash runs could be hidden from the policy.
 * - `nesting-limit`: shell strings nested deeper than the policy reads.
 * - `too-long`: a command longer than the policy reads (write big content with a file tool).
 * - `policy-closed`: the policy was closed before it was asked.
 */
export type CommandRule =
  | 'empty'
  | 'read-only'
  | 'confined'
  | 'writes-file'
  | 'environment'
  | 'workspace-wipe'
  | 'git-discards-changes'
  | 'dynamic-command'
  | 'dynamic-argument'
  | 'dynamic-code'
  | 'unclear-command'
  | 'escalation'
  | 'privilege'
  | 'disk'
  | 'power'
  | 'system-delete'
  | 'git-outside-workspace'
  | 'git-destroys-work'
  | 'download-to-shell'
  | 'dynamic-eval'
  | 'unparseable'
  | 'ambiguous-syntax'
  | 'nesting-limit'
  | 'too-long'
  | 'policy-closed'

/** One rule's conclusion about one command (the verdicts are ports/access-context.ts's). */
export type CommandFinding = Finding<CommandRule>

/** The verdict for one simple command (or one assignment, redirection or pipeline). */
export type CommandPart = Part<CommandRule>

/** The policy's answer for a whole command: the most severe part decides. */
export type CommandJudgement = Judgement<CommandRule>

/** Severity of each verdict; a higher number wins. */
export const VERDICT_SEVERITY: Readonly<Record<CommandVerdict, number>> = Object.freeze({
  allow: 0,
  jail: 1,
  ask: 2,
  deny: 3,
})

/** The first of the most severe findings, or undefined when there are none. */
export function mostSevere<Finding extends CommandFinding>(
  findings: readonly Finding[],
): Finding | undefined {
  let worst: Finding | undefined
  for (const finding of findings) {
    if (worst === undefined || VERDICT_SEVERITY[finding.verdict] > VERDICT_SEVERITY[worst.verdict])
      worst = finding
  }
  return worst
}

/** Combines parts into the judgement of the whole command. */
export function judgementOf(parts: readonly CommandPart[]): CommandJudgement {
  const worst = mostSevere(parts)
  if (worst === undefined)
    return { verdict: 'allow', rule: 'empty', reason: 'nothing to run', parts }
  return { verdict: worst.verdict, rule: worst.rule, reason: worst.reason, parts }
}
