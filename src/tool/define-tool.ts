/**
 * @module tool/define-tool
 * A tool is plain data: a name, a description, a zod schema for its input, and `execute`.
 */
import { z } from 'zod'
import type { ToolContext } from './tool-context.ts'
import type { ToolGovernance } from './tool-governance.ts'
import type { ToolResult } from './tool-result.ts'

/** Tool names: lower snake case, at most 64 characters, as every model API accepts. */
export const TOOL_NAME_PATTERN = /^[a-z][a-z0-9_]{0,63}$/

/** The JSON Schema of a tool's input, as models and MCP clients see it. */
export type JsonSchema = Record<string, unknown>

/** A tool's input schema: always an object, since every model API expects one. */
export type ToolParameters = z.ZodObject

/**
 * Which line of the workspace a call may change, so main is snapshotted before it (and can be
 * restored): `current-line` (the line the session works on), or a function of the input that
 * names the line (`main` or a fork id). A tool without it never changes workspace files.
 */
export type LineChanges<Input> = 'current-line' | ((input: Input, ctx: ToolContext) => string)

/** A tool, as defined by `defineTool`. */
export interface Tool<Parameters extends ToolParameters = ToolParameters> {
  readonly name: string
  readonly description: string
  readonly parameters: Parameters
  /** The input's JSON Schema, computed once when the tool is defined. */
  readonly inputSchema: JsonSchema
  /** Runs the call. Input has already been validated; `ctx.signal` reports cancellation. */
  readonly execute: (input: z.output<Parameters>, ctx: ToolContext) => Promise<ToolResult>
  /** Side effects, limits and sandbox of a confined tool (see `confine`); absent otherwise. */
  readonly governance?: ToolGovernance
  /** Which line a call may change; absent for a tool that never changes workspace files. */
  readonly changes?: LineChanges<z.output<Parameters>>
  /**
   * True for a tool whose calls change nothing anywhere (no file, record, process, message or
   * payment): all a call does is answer. A model loop need not make its intent durable before
   * it runs (see `agent/llm/step-journal.ts`). Absent: the tool may have effects.
   */
  readonly readOnly?: true
  /**
   * Whether the tool can be offered in this context; a reason when it cannot. A tool that is
   * unavailable is hidden from what is offered and refused with the reason.
   */
  readonly availability?: (ctx: ToolContext) => Promise<string | undefined>
}

/** What `defineTool` takes. */
export interface ToolDefinitionInput<Parameters extends ToolParameters> {
  readonly name: string
  readonly description: string
  readonly parameters: Parameters
  readonly execute: (input: z.output<Parameters>, ctx: ToolContext) => Promise<ToolResult>
  /** Frozen with the tool. */
  readonly governance?: ToolGovernance | undefined
  readonly changes?: LineChanges<z.output<Parameters>> | undefined
  /** Declares that calls change nothing anywhere; only for a tool that truly only reads. */
  readonly readOnly?: boolean | undefined
  readonly availability?: ((ctx: ToolContext) => Promise<string | undefined>) | undefined
}

/**
 * Defines a tool. Checks the name and schema now, so a bad definition fails at startup rather
 * than at the first call.
 *
 * @throws TypeError when the name does not match {@link TOOL_NAME_PATTERN}, the description is
 *   empty, or `parameters` is not a zod object schema.
 * @example
 * const hello = defineTool({
 *   name: 'hello',
 *   description: 'Greets someone.',
 *   parameters: z.object({ who: z.string() }),
 *   execute: async ({ who }) => toolSuccess(`Hello, ${who}!`),
 * })
 */
export function defineTool<Parameters extends ToolParameters>(
  definition: ToolDefinitionInput<Parameters>,
): Tool<Parameters> {
  const { name, description, parameters, execute, governance, changes, readOnly, availability } =
    definition
  if (typeof name !== 'string' || !TOOL_NAME_PATTERN.test(name)) {
    throw new TypeError(
      `Invalid tool name ${JSON.stringify(name)}: names must match ${TOOL_NAME_PATTERN.source} (lower snake case, at most 64 characters).`,
    )
  }
  if (typeof description !== 'string' || description.trim() === '') {
    throw new TypeError(`Tool "${name}" needs a description: models choose tools by it.`)
  }
  if (!(parameters instanceof z.ZodObject)) {
    throw new TypeError(`Tool "${name}": parameters must be a zod object schema (z.object({...})).`)
  }
  if (typeof execute !== 'function') {
    throw new TypeError(`Tool "${name}": execute must be a function.`)
  }
  if (changes !== undefined && changes !== 'current-line' && typeof changes !== 'function') {
    throw new TypeError(
      `Tool "${name}": changes must be 'current-line' or a function of the input naming the line.`,
    )
  }
  if (readOnly !== undefined && typeof readOnly !== 'boolean') {
    throw new TypeError(`Tool "${name}": readOnly must be true or false.`)
  }
  if (readOnly === true && (changes !== undefined || governance?.sideEffects === 'write')) {
    throw new TypeError(
      `Tool "${name}": a readOnly tool changes nothing, so it cannot declare changes or write side effects.`,
    )
  }
  return Object.freeze({
    name,
    description,
    parameters,
    inputSchema: inputJsonSchema(parameters),
    execute,
    ...(governance === undefined ? {} : { governance: freezeGovernance(governance) }),
    ...(changes === undefined ? {} : { changes }),
    ...(readOnly === true ? { readOnly } : {}),
    ...(availability === undefined ? {} : { availability }),
  })
}

function freezeGovernance(governance: ToolGovernance): ToolGovernance {
  return Object.freeze({
    ...governance,
    sandbox: Object.freeze({
      ...governance.sandbox,
      allowPaths: Object.freeze([...governance.sandbox.allowPaths]),
    }),
  })
}

function inputJsonSchema(parameters: ToolParameters): JsonSchema {
  const { $schema: _dialect, ...schema } = z.toJSONSchema(parameters, { io: 'input' }) as JsonSchema
  return schema
}
