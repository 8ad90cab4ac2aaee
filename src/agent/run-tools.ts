/**
 * @module agent/run-tools
 * The tools a Run's program may call: exactly the Run's toolset (its definition's, after the
 * ceiling), each call run through the tool contract in the Run's world, under the Run's access
 * and approver, with the Run as the parent of any agent a tool hires. The host (the workshop)
 * builds them per Run; a runtime without one gives programs no tools.
 */
import type { ModelRun } from '../ports/model-run.ts'
import type { OfferedTool, ToolCall } from '../tool/toolset.ts'
import { toolError, type ToolResult } from '../tool/tool-result.ts'
import type { Authority } from './delegation-ceiling.ts'
import type { HireOptions } from './hire-request.ts'
import type { AgentRef, Roster } from './roster.ts'
import type { RunHandle } from './run-handle.ts'

/** The tools of one Run. */
export interface RunTools {
  /** What a model is offered: the Run's tools that are available in its world. */
  offered(): Promise<readonly OfferedTool[]>
  /**
   * Whether calls of the tool `name` change nothing anywhere (the tool declares `readOnly`);
   * false for a name it does not know. Absent: every tool is taken to have effects.
   */
  readOnly?(name: string): boolean
  /** Runs one call through the contract in the Run's world. Never throws. */
  call(call: ToolCall, options: { readonly signal: AbortSignal }): Promise<ToolResult>
  /**
   * Ends what the Run's calls left running (background jobs, eval sessions); called once, when
   * the program has ended. Never throws.
   */
  close?(): Promise<void>
}

/** What a host builds a Run's tools from: the Run, as its program sees it. */
export interface RunToolScope {
  readonly runId: string
  /** The Run's world by name (its `world`). */
  readonly world: string
  /** The id of the fork that is the Run's world: the one line its tools act on. */
  readonly line: string
  /** What the Run may do: its access and tools, already bounded by whoever hired it. */
  readonly authority: Authority
  /** Aborts when the Run is cancelled. */
  readonly signal: AbortSignal
  /** Its model and budget, when its program runs a model; tools read them as `ctx.modelRun`. */
  readonly modelRun?: ModelRun | undefined
  /** Hires a child of this Run (as the program's own `hire`). */
  hire(roster: Roster, ref: string | AgentRef, options: HireOptions): Promise<RunHandle>
}

/** Makes the tools of one Run; a host that cannot refuses by throwing (the Run then fails). */
export type RunToolsFactory = (scope: RunToolScope) => Promise<RunTools>

/** The tools of a Run whose host gives it none. */
export const NO_RUN_TOOLS: RunTools = Object.freeze({
  offered: async () => [],
  call: async (call: ToolCall) =>
    toolError('not_available', `Tool not available to this Run: ${call.name}. It has no tools.`),
})
