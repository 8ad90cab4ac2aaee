/**
 * @module tools/budget
 * The budget tool: a model Run's dollar budget, as it stands.
 */
import type { Tool } from '../../tool/define-tool.ts'
import { budgetTool } from './budget-tool.ts'

/** The budget tools. */
export const budgetTools: readonly Tool[] = [budgetTool]

export { budgetTool }
