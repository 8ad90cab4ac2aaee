/**
 * @module access/command-policy/rules/redirects
 * Output redirections: writing a file makes any command at least `jail`; writing a disk device
 * (`> /dev/sda`) is never allowed.
 */
import type { CommandFinding } from '../command-judgement.ts'
import { isDiskDevice } from '../dangerous-paths.ts'
import type { Redirect } from '../shell-syntax.ts'

/** Operators that open their target for writing. */
const WRITING_OPERATORS = new Set(['>', '>>', '>|', '&>', '&>>', '<>', '>&'])

/** Targets that are not files: writing them leaves nothing behind. */
const HARMLESS_TARGETS = /^\/dev\/(null|stdout|stderr|tty|fd\/\d+)$/

/** Findings for a command's (or a block's) redirections. */
export function redirectFindings(redirects: readonly Redirect[]): CommandFinding[] {
  const findings: CommandFinding[] = []
  for (const redirect of redirects) {
    if (!WRITING_OPERATORS.has(redirect.operator)) continue
    const target = redirect.target?.value
    // `>&2` and `>&-` duplicate or close a descriptor; only `>& file` writes a file.
    if (redirect.operator === '>&' && target !== undefined && /^(\d+|-)$/.test(target)) continue
    if (target !== undefined && HARMLESS_TARGETS.test(target)) continue
    if (target !== undefined && isDiskDevice(target)) {
      findings.push({
        verdict: 'deny',
        rule: 'disk',
        reason: `${redirect.text} writes straight to a disk device, which destroys its data; write to a file in the workspace instead`,
      })
      continue
    }
    findings.push({
      verdict: 'jail',
      rule: 'writes-file',
      reason: `${redirect.text} writes a file; the command runs confined`,
    })
  }
  return findings
}
