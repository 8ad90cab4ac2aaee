/**
 * @module tool/tool-registry
 * Every tool a process knows, by name. Knowing a tool is not being allowed to run it: that is
 * the toolset's job.
 */
import type { Tool } from './define-tool.ts'

/** An immutable map of tools by name. */
export class ToolRegistry {
  readonly #tools: ReadonlyMap<string, Tool>

  /** @throws TypeError when two tools share a name. */
  constructor(tools: Iterable<Tool>) {
    const byName = new Map<string, Tool>()
    for (const tool of tools) {
      if (byName.has(tool.name))
        throw new TypeError(`Two tools are named "${tool.name}"; names must be unique.`)
      byName.set(tool.name, tool)
    }
    this.#tools = byName
  }

  get(name: string): Tool | undefined {
    return this.#tools.get(name)
  }

  has(name: string): boolean {
    return this.#tools.has(name)
  }

  /** Tool names in registration order. */
  names(): string[] {
    return [...this.#tools.keys()]
  }
}
