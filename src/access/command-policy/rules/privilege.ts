/**
 * @module access/command-policy/rules/privilege
 * Programs that gain privilege are never run: the session already has all the access it may
 * have, and a person grants more through the approver, not through sudo.
 */
import type { CommandRuleCheck } from './rule.ts'

/** Programs that run something as another (usually the root) user. */
export const PRIVILEGE_PROGRAMS: ReadonlySet<string> = new Set([
  'sudo',
  'sudoedit',
  'su',
  'doas',
  'pkexec',
  'run0',
])

export const checkPrivilege: CommandRuleCheck = (command) => {
  const program = [...command.wrappers, command.name].find((name) => PRIVILEGE_PROGRAMS.has(name))
  if (program === undefined) return []
  return [
    {
      verdict: 'deny',
      rule: 'privilege',
      reason: `${program} is never allowed: commands already run with all the access this session has; run the command without ${program}, or ask for wider access`,
    },
  ]
}
