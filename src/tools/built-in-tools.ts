/**
 * @module tools/built-in-tools
 * Every tool eitri ships, in the order they are offered.
 */
import type { Tool } from '../tool/define-tool.ts'
import { budgetTools } from './budget/index.ts'
import { delegationTools } from './delegation/index.ts'
import { evalTools } from './eval/index.ts'
import { fileTools } from './files/index.ts'
import { knowledgeTools } from './knowledge/index.ts'
import { modeTools } from './modes/mode-tools.ts'
import { runTools } from './runs/index.ts'
import { shellTools } from './shell/index.ts'
import { taskTools } from './tasks/index.ts'
import { workspaceTools } from './workspace/index.ts'

/** The built-in tools. Each capability adds its own here. */
export function builtInTools(): Tool[] {
  return [
    ...fileTools,
    ...shellTools,
    ...evalTools,
    ...modeTools,
    ...taskTools,
    ...knowledgeTools,
    ...runTools,
    ...delegationTools,
    ...budgetTools,
    ...workspaceTools,
  ]
}
