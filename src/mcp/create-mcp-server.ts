/**
 * @module mcp/create-mcp-server
 * An MCP server that offers a toolset: `tools/list` is exactly what the toolset offers, and
 * `tools/call` runs through the whole tool contract. One server serves one connection.
 */
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import {
  CallToolRequestSchema,
  ListToolsRequestSchema,
  type CallToolResult,
  type Tool as McpTool,
} from '@modelcontextprotocol/sdk/types.js'
import type { ToolContext } from '../tool/tool-context.ts'
import type { ToolResult } from '../tool/tool-result.ts'
import type { Toolset } from '../tool/toolset.ts'
import { packageInfo } from '../util/package-info.ts'

/** What an MCP server needs. */
export interface McpServerOptions {
  readonly toolset: Toolset
  /**
   * Builds the context of one call; `signal` aborts when the client cancels. May be async: a
   * connection's session can be opened at its first call, once the client has said its name.
   */
  readonly context: (options: { signal: AbortSignal }) => ToolContext | Promise<ToolContext>
  /** Where protocol-level faults are reported (never stdout). */
  readonly log?: (message: string) => void
  /** Called once when the connection closes (to end its background jobs). */
  readonly onClose?: () => Promise<void> | void
  /** Called with the server once it exists (an approver elicits through it). */
  readonly onCreated?: (server: Server) => void
  /**
   * Called after each answer to `tools/list` has been sent. A client lists the tools, then
   * waits on its model: a server prepares for the first call then (`eitri serve` loads what a
   * shell command needs), without holding up the handshake or the list.
   */
  readonly onToolsListed?: () => void
}

/** Instructions sent to clients at initialization. */
const INSTRUCTIONS =
  'eitri tools act on one workspace folder. Paths are relative to the workspace root; every call is confined to it.'

/**
 * Creates the server for one connection.
 *
 * @example
 * const server = createMcpServer({ toolset: workshop.toolset, context: workshop.context })
 * await server.connect(new StdioServerTransport())
 */
export function createMcpServer(options: McpServerOptions): Server {
  const server = new Server(
    { name: packageInfo.name, version: packageInfo.version },
    { capabilities: { tools: {} }, instructions: INSTRUCTIONS },
  )
  server.onerror = (error) => options.log?.(`MCP protocol error: ${error.message}`)
  server.onclose = () => void options.onClose?.()
  options.onCreated?.(server)
  server.setRequestHandler(ListToolsRequestSchema, async (_request, extra) => {
    const offered = await options.toolset.offeredIn(await options.context({ signal: extra.signal }))
    // The answer is written in this turn of the event loop; the callback runs after it.
    if (options.onToolsListed !== undefined) setImmediate(options.onToolsListed)
    return {
      tools: offered.map((tool): McpTool => ({
        name: tool.name,
        description: tool.description,
        inputSchema: tool.input_schema as McpTool['inputSchema'],
      })),
    }
  })
  server.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    const base = await options.context({ signal: extra.signal })
    const token = request.params._meta?.progressToken
    // Only a client that asked for progress (with a token) is sent any.
    const ctx: ToolContext =
      token === undefined
        ? base
        : {
            ...base,
            progress: (update) =>
              void extra
                .sendNotification({
                  method: 'notifications/progress',
                  params: { progressToken: token, ...update },
                })
                .catch(() => undefined),
          }
    const result = await options.toolset.run(
      { name: request.params.name, input: request.params.arguments ?? {} },
      ctx,
    )
    return toCallToolResult(result)
  })
  return server
}

/** A ToolResult as MCP carries it: the text for the model, the whole result as structured data. */
export function toCallToolResult(result: ToolResult): CallToolResult {
  return {
    content: [{ type: 'text', text: result.content }],
    isError: result.type === 'error',
    structuredContent: { ...result },
  }
}
