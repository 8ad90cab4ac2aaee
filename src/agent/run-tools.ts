/**
 * @module agent/run-tools
 * The tools a Run's program may call: exactly the Run's toolset (its definition's, after the
 * ceiling), each call run through the tool contract in the Run's world, under the Run's access
 * and approver, with the Run as the parent of any agent a tool hires. The host (the workshop)
 * builds them per Run; a runtime without one gives programs no tools.
 */
import type { OfferedTool, ToolCall } from '../tool/toolset.ts'
import { toolError, type ToolResult } from '../tool/tool-result.ts'

/** The tools of one Run. */
export interface RunTools {
  /** What a model is offered: the Run's tools that are available in its world. */
  offered(): Promise<readonly OfferedTool[]>
  /** Runs one call through the contract in the Run's world. Never throws. */
  call(call: ToolCall, options: { readonly signal: AbortSignal }): Promise<ToolResult>
}

/** The tools of a Run whose host gives it none. */
export const NO_RUN_TOOLS: RunTools = Object.freeze({
  offered: async () => [],
  call: async (call: ToolCall) =>
    toolError('not_available', `Tool not available to this Run: ${call.name}. It has no tools.`),
})
