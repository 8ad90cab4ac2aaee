/**
 * Test support: connects an MCP SDK client to a real `eitri serve` over stdio, and calls its
 * tools with the parts of a result the tests look at.
 */
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import { EITRI_BIN } from './eitri-process.ts'
import type { Scratch } from './scratch.ts'

/** What a tool call answered: its error flag, first text, refusal code and metadata. */
export interface ServeToolResult {
  readonly isError: boolean
  readonly text: string
  readonly code: string | undefined
  readonly metadata: Record<string, unknown>
}

/** Calls one tool of the server by name. */
export type ServeToolCall = (
  name: string,
  input: Record<string, unknown>,
) => Promise<ServeToolResult>

/**
 * Connects `client` (built by the test, with whatever capabilities it needs) to `eitri serve`
 * on the scratch project, with `args` after the scratch's flags, and answers a caller of its
 * tools. The test closes the client.
 */
export async function connectServe(
  client: Client,
  scratch: Scratch,
  args: readonly string[] = [],
): Promise<ServeToolCall> {
  await client.connect(
    new StdioClientTransport({
      command: process.execPath,
      args: [EITRI_BIN, 'serve', ...scratch.flags, ...args],
      stderr: 'pipe',
    }),
  )
  return async (name, input) => {
    const result = (await client.callTool({ name, arguments: input })) as CallToolResult
    const structured = result.structuredContent as {
      code?: string
      metadata?: Record<string, unknown>
    }
    return {
      isError: result.isError === true,
      text: result.content[0]?.type === 'text' ? result.content[0].text : '',
      code: structured.code,
      metadata: structured.metadata ?? {},
    }
  }
}
