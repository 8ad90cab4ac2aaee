/**
 * @module confine/confined-source
 * What a confined tool runs, remembered on the tool so re-confining it replaces the sandbox
 * (the new options apply to the original function) instead of nesting one inside another.
 */
import { existsSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { EitriError } from '../errors/eitri-error.ts'
import type { Tool } from '../tool/define-tool.ts'
import type { ToolContext } from '../tool/tool-context.ts'
import { unwrapToolResult } from './child/call-target.ts'
import {
  moduleUrl,
  type ConfinedFunction,
  type ConfinedTarget,
  type ModuleExport,
} from './confined-function.ts'

/** A confined tool's origin: a closure, a module's export, or an ordinary tool. */
export type ConfinedSource =
  | Extract<ConfinedTarget, { type: 'function' }>
  | Extract<ConfinedTarget, { type: 'module' }>
  | { readonly type: 'tool'; readonly tool: Tool }

const SOURCE = Symbol('eitri.confined-source')

type Marked = { [SOURCE]?: ConfinedSource }

/** Marks a confined tool's `execute` with its source. */
export function markSource<Function_ extends object>(
  execute: Function_,
  source: ConfinedSource,
): Function_ {
  Object.defineProperty(execute, SOURCE, { value: source, enumerable: false })
  return execute
}

/** The source of a tool that `confine` made; undefined for any other tool. */
export function sourceOf(tool: Tool): ConfinedSource | undefined {
  return (tool.execute as Marked)[SOURCE]
}

/**
 * A module reference as a source.
 *
 * @throws EitriError `invalid_definition` when the module is not a `file:` URL or absolute path,
 *   does not exist, or the export is unnamed.
 */
export function moduleSource(reference: ModuleExport, tool: string): ConfinedSource {
  const refuse = (reason: string): never => {
    throw new EitriError('invalid_definition', `confine('${tool}'): ${reason}.`)
  }
  const url = moduleUrl(reference.module)
  if (url === undefined) {
    return refuse(
      `the module must be a file: URL (import.meta.resolve('./x.ts')) or an absolute path, not ${JSON.stringify(String(reference.module))}`,
    )
  }
  if (!existsSync(fileURLToPath(url))) return refuse(`the module ${url} does not exist`)
  if (reference.export === '') return refuse('the export needs a name')
  return { type: 'module', module: url, export: reference.export }
}

/** A closure as a source. */
export function functionSource(confined: ConfinedFunction): ConfinedSource {
  return { type: 'function', function: confined }
}

/** What an executor runs for one call: an ordinary tool runs in process with the call's context. */
export function callTarget(source: ConfinedSource, ctx: ToolContext): ConfinedTarget {
  if (source.type !== 'tool') return source
  const { tool } = source
  return {
    type: 'function',
    function: async (input: never, call) =>
      unwrapToolResult(await tool.execute(input, { ...ctx, signal: call.signal })),
  }
}
