/**
 * @module mcp/serve-stdio
 * The MCP server over standard input and output. Nothing but protocol goes to stdout.
 */
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js'
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js'
import { createMcpServer, type McpServerOptions } from './create-mcp-server.ts'

/**
 * Serves one connection on stdio until the client closes it. Resolves when it ends.
 */
export async function serveStdio(options: McpServerOptions): Promise<void> {
  const server = createMcpServer(options)
  const transport = new StdioServerTransport()
  const closed = new Promise<void>((resolve) => {
    const previous = server.onclose
    server.onclose = () => {
      previous?.()
      resolve()
    }
  })
  await server.connect(transport)
  answerParseErrors(transport)
  process.stdin.once('end', () => void server.close())
  await closed
}

/**
 * The SDK drops a line it cannot parse after reporting it; JSON-RPC asks for a parse error
 * reply with a null id, so a client that sent garbage learns why nothing happened.
 */
function answerParseErrors(transport: StdioServerTransport): void {
  const report = transport.onerror
  transport.onerror = (error) => {
    report?.(error)
    if (error instanceof SyntaxError || error.name === 'ZodError' || error.name === '$ZodError') {
      const reply = {
        jsonrpc: '2.0',
        id: null,
        error: { code: -32700, message: `Parse error: ${error.message.slice(0, 200)}` },
      }
      transport.send(reply as unknown as JSONRPCMessage).catch(() => undefined)
    }
  }
}
