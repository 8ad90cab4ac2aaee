/**
 * @module tool/toolset
 * The allowlist an agent or connection holds. What it offers is exactly what it can run.
 */
import { EitriError } from '../errors/eitri-error.ts'
import { inputExcerpt } from '../errors/input-excerpt.ts'
import type { JsonSchema, Tool } from './define-tool.ts'
import { runToolCall } from './run-tool-call.ts'
import type { ToolContext } from './tool-context.ts'
import type { ToolRegistry } from './tool-registry.ts'
import { toolError, type ToolResult } from './tool-result.ts'
import { truncateResult } from './truncate.ts'

/** A tool as offered to a model: the same schema under both API shapes' keys. */
export interface OfferedTool {
  readonly name: string
  readonly description: string
  /** Anthropic's key. */
  readonly input_schema: JsonSchema
  /** OpenAI's key. */
  readonly parameters: JsonSchema
}

/** One call a model asked for. */
export interface ToolCall {
  readonly name: string
  readonly input: unknown
}

/** The content of a call that never started because the batch was cancelled. */
export const CANCELLED_BEFORE_EXECUTION = '[cancelled before execution]'

/**
 * The tools one agent may use, drawn from a registry. Omitted tools are no tools: a toolset
 * built with no names offers and runs nothing.
 *
 * @example
 * const toolset = new Toolset(registry, ['read_file', 'grep'])
 * const result = await toolset.run({ name: 'read_file', input: { path: 'README.md' } }, ctx)
 */
export class Toolset {
  readonly #registry: ToolRegistry
  readonly #allowed: ReadonlyMap<string, Tool>

  /** @throws EitriError `unknown_tool` when a name is not registered. */
  constructor(registry: ToolRegistry, names: Iterable<string> = []) {
    const allowed = new Map<string, Tool>()
    for (const name of names) {
      const tool = registry.get(name)
      if (tool === undefined) {
        throw new EitriError(
          'unknown_tool',
          `Unknown tool: ${inputExcerpt(name)}. Known tools: ${registry.names().join(', ') || '(none)'}.`,
        )
      }
      allowed.set(name, tool)
    }
    this.#registry = registry
    this.#allowed = allowed
  }

  /** Names this toolset offers, in order. */
  names(): string[] {
    return [...this.#allowed.keys()]
  }

  /** The tool by name, if this toolset allows it. */
  get(name: string): Tool | undefined {
    return this.#allowed.get(name)
  }

  /** A toolset holding only `names`, each of which this one must already allow: it never widens. */
  narrow(names: Iterable<string>): Toolset {
    const wanted = [...names]
    for (const name of wanted) {
      if (!this.#allowed.has(name)) {
        throw new EitriError(
          this.#registry.has(name) ? 'not_available' : 'unknown_tool',
          `Cannot narrow to "${inputExcerpt(name)}": it is not in this toolset (${this.names().join(', ') || 'empty'}).`,
        )
      }
    }
    return new Toolset(this.#registry, wanted)
  }

  /** What the model is offered: exactly what this toolset can run. */
  offered(): OfferedTool[] {
    return [...this.#allowed.values()].map((tool) => ({
      name: tool.name,
      description: tool.description,
      input_schema: tool.inputSchema,
      parameters: tool.inputSchema,
    }))
  }

  /** What is offered in `ctx`: the tools whose availability allows them there. */
  async offeredIn(ctx: ToolContext): Promise<OfferedTool[]> {
    const offered = this.offered()
    const hidden = await Promise.all(
      offered.map(
        async (entry) => (await this.#allowed.get(entry.name)?.availability?.(ctx)) !== undefined,
      ),
    )
    return offered.filter((_entry, index) => hidden[index] !== true)
  }

  /**
   * Runs one call through the whole contract. Never throws. Every answer, refusals before the
   * tool runs included, fits the result budget, and quotes of the call's own input are bounded.
   */
  async run(call: ToolCall, ctx: ToolContext): Promise<ToolResult> {
    return truncateResult(await this.#run(call, ctx))
  }

  async #run(call: ToolCall, ctx: ToolContext): Promise<ToolResult> {
    const tool = this.#allowed.get(call.name)
    if (tool === undefined) {
      if (this.#registry.has(call.name)) {
        return toolError(
          'not_available',
          `Tool not available to this agent: ${inputExcerpt(call.name)}. ${await this.#available(ctx)}`,
        )
      }
      return toolError(
        'unknown_tool',
        `Unknown tool: ${inputExcerpt(call.name)}. ${await this.#available(ctx)}`,
      )
    }
    const unavailable = await tool.availability?.(ctx)
    if (unavailable !== undefined)
      return toolError('not_available', unavailable, { tool: call.name })
    return runToolCall(tool, call.input, ctx)
  }

  /**
   * Runs calls one after another. Once `ctx.signal` aborts, the call in flight ends as
   * `cancelled` and each remaining call answers `[cancelled before execution]`, so every call
   * gets exactly one result.
   */
  async runBatch(calls: readonly ToolCall[], ctx: ToolContext): Promise<ToolResult[]> {
    const results: ToolResult[] = []
    for (const call of calls) {
      results.push(
        ctx.signal.aborted
          ? toolError('cancelled', CANCELLED_BEFORE_EXECUTION, { tool: call.name })
          : await this.run(call, ctx),
      )
    }
    return results
  }

  /** The tools offered in `ctx`, not those that would answer `not_available` there. */
  async #available(ctx: ToolContext): Promise<string> {
    const names = (await this.offeredIn(ctx)).map((tool) => tool.name)
    return names.length === 0 ? 'This agent has no tools.' : `Available tools: ${names.join(', ')}.`
  }
}
