/**
 * @module agent/llm/inputs-id
 * A content hash of what a model Run is given before its task: the assembled system prompt,
 * each offered tool's name, description and schema, and the resolved model. Runs with the same
 * id asked the same model the same way, whatever their tasks.
 */
import { createHash } from 'node:crypto'
import type { OfferedTool } from '../../tool/toolset.ts'
import { canonicalJson } from '../canonical-json.ts'

/** The inputs id: `sha256:` and the hex digest. */
export function inputsId(system: string, tools: readonly OfferedTool[], modelRef: string): string {
  const content = canonicalJson({
    system,
    tools: tools.map((tool) => ({
      name: tool.name,
      description: tool.description,
      schema: tool.input_schema,
    })),
    model: modelRef,
  })
  return `sha256:${createHash('sha256').update(content).digest('hex')}`
}
