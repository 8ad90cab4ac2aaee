/**
 * @module access/command-policy/rules/nested-code
 * What the rules that find code inside a command answer: the code judged as parts of its own,
 * or a finding that it cannot be read.
 */
import type { CommandFinding } from '../command-judgement.ts'
import type { ResolvedCommand } from '../resolve-command.ts'
import { quoted, type RuleContext } from './rule.ts'

/** Judges nested code; its parts join the whole judgement, so the outer part adds nothing. */
export function judged(context: RuleContext, source: string): CommandFinding[] {
  context.judgeScript(source)
  return []
}

/** Code the policy cannot read before it runs: a person decides. */
export function unreadable(command: ResolvedCommand, what: string): CommandFinding {
  return {
    verdict: 'ask',
    rule: 'dynamic-code',
    reason: `${quoted(command)}: ${command.name} would run code from ${what}, which the policy cannot read before it runs; write the code in the command itself`,
  }
}

/** `eval` or `source` of code not written in the command: never. */
export function dynamicEval(command: ResolvedCommand, what: string): CommandFinding {
  return {
    verdict: 'deny',
    rule: 'dynamic-eval',
    reason: `${quoted(command)}: ${command.name} of ${what}, code not written in the command, is never allowed; write the commands out instead`,
  }
}
