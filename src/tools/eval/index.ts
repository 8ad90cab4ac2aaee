/**
 * @module tools/eval
 * The code sandbox's tool.
 */
import type { Tool } from '../../tool/define-tool.ts'
import { jsEvalTool } from './js-eval-tool.ts'

/** The eval tools, in the order they are offered. */
export const evalTools: readonly Tool[] = [jsEvalTool]

export { jsEvalTool }
