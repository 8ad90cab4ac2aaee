/**
 * @module confine/child/call-target
 * Loads a confined module's export and calls it, in the child runner and in process alike. An
 * export is a function, or a tool (re-confined from its module): a tool runs with a workspace
 * that refuses everything, and its result is unwrapped (content, or a failure).
 */
import type { ToolResult } from '../../tool/tool-result.ts'
import { workspaceRefused, type WorkspaceView } from '../../ports/workspace-view.ts'
import type { ConfinedCall } from '../confined-function.ts'

/**
 * Imports `module` and answers its export `name`.
 *
 * @throws Error naming the module and export when the module has no such export.
 */
export async function loadExport(module: string, name: string): Promise<unknown> {
  const namespace = (await import(module)) as Record<string, unknown>
  if (!(name in namespace)) throw new Error(`the module ${module} has no export "${name}"`)
  return namespace[name]
}

/** Calls a confined export with the input: a function directly, a tool through `execute`. */
export async function callExport(
  value: unknown,
  input: unknown,
  call: ConfinedCall,
): Promise<unknown> {
  if (typeof value === 'function') return await (value as CallableExport)(input, call)
  if (isToolLike(value)) {
    return unwrapToolResult(await value.execute(input, { signal: call.signal, workspace }))
  }
  throw new Error('the export is neither a function nor a tool')
}

/** A tool's result as a confined function's: its content, or a thrown failure. */
export function unwrapToolResult(result: ToolResult): string {
  if (result.type === 'success') return result.content
  throw new Error(result.content)
}

type CallableExport = (input: unknown, call: ConfinedCall) => unknown

interface ToolLike {
  execute(
    input: unknown,
    ctx: { signal: AbortSignal; workspace: WorkspaceView },
  ): Promise<ToolResult>
}

function isToolLike(value: unknown): value is ToolLike {
  return (
    typeof value === 'object' &&
    value !== null &&
    typeof (value as Partial<ToolLike>).execute === 'function'
  )
}

/** The workspace a tool sees when it runs confined: none. */
const workspace: WorkspaceView = workspaceRefused(
  'confined',
  'A confined tool runs apart from the workspace and cannot reach it: pass what it needs in its input.',
)
