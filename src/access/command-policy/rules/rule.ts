/**
 * @module access/command-policy/rules/rule
 * The shape every rule family shares: it looks at one resolved command and answers findings.
 */
import type { CommandFinding, CommandJudgement } from '../command-judgement.ts'
import type { ResolvedCommand } from '../resolve-command.ts'

/** What a rule may ask of the judge. */
export interface RuleContext {
  /**
   * Judges shell code found inside the command (`bash -c '…'`, `eval …`) one nesting level
   * deeper; its parts join the judgement of the whole command.
   */
  judgeScript(source: string): CommandJudgement
  /** Judges a command that this one runs (`find -exec rm {} ;`) as if it were written alone. */
  judgeCommand(command: ResolvedCommand): CommandFinding
}

/** One family of rules. Answers nothing when the family has nothing to say. */
export type CommandRuleCheck = (
  command: ResolvedCommand,
  context: RuleContext,
) => readonly CommandFinding[]

/** The command as the reason should quote it: its first line, shortened. */
export function quoted(command: ResolvedCommand): string {
  const firstLine = command.source.text.split('\n')[0] ?? ''
  return firstLine.length > 80 ? `${firstLine.slice(0, 80)}…` : firstLine
}
