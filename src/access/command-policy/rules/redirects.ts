/**
 * @module access/command-policy/rules/redirects
 * Output redirections: writing a file makes any command at least `jail`; writing a disk device
 * (`> /dev/sda`) is never allowed. Only `/dev/null` is harmless: `/dev/stdout`, `/dev/stderr`,
 * `/dev/stdin`, `/dev/fd/N`, `/proc/self/fd/N` and `/dev/tty` open again whatever is behind the
 * descriptor, which the same command can point at a file (`echo x 3<f >/dev/fd/3` overwrites
 * `f`, `{ echo x >/dev/stdout; } 1<f` too). Duplicating a descriptor (`2>&1`, `>&3`) opens
 * nothing: a descriptor opened only for reading cannot be written through.
 */
import type { CommandFinding } from '../command-judgement.ts'
import { isDiskDevice } from '../dangerous-paths.ts'
import type { Redirect } from '../shell-syntax.ts'

/** Operators that open their target for writing. */
const WRITING_OPERATORS = new Set(['>', '>>', '>|', '&>', '&>>', '<>', '>&'])

/** The one target that is not a file: writing it leaves nothing behind. */
const HARMLESS_TARGET = '/dev/null'

/** Findings for a command's (or a block's) redirections. */
export function redirectFindings(redirects: readonly Redirect[]): CommandFinding[] {
  const findings: CommandFinding[] = []
  for (const redirect of redirects) {
    if (!WRITING_OPERATORS.has(redirect.operator)) continue
    const target = redirect.target?.value
    // `>&2` and `>&-` duplicate or close a descriptor; only `>& file` writes a file.
    if (redirect.operator === '>&' && target !== undefined && /^(\d+|-)$/.test(target)) continue
    if (target === HARMLESS_TARGET) continue
    if (target !== undefined && isDiskDevice(target)) {
      findings.push({
        verdict: 'deny',
        rule: 'disk',
        reason: `${redirect.text} writes straight to a disk device, which destroys its data; write to a file in the workspace instead`,
      })
      continue
    }
    const reopens = target !== undefined && /^\/(dev|proc)\//.test(target)
    findings.push({
      verdict: 'jail',
      rule: 'writes-file',
      reason: reopens
        ? `${redirect.text} opens again whatever is behind that descriptor, which can be a file; the command runs confined (to write to standard output or error without opening anything, write >&1 or >&2)`
        : `${redirect.text} writes a file; the command runs confined`,
    })
  }
  return findings
}
