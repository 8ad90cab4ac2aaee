/**
 * @module mcp/serve-stdio
 * The MCP server over standard input and output. Nothing but protocol goes to stdout.
 */
import { PassThrough } from 'node:stream'
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js'
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js'
import { createMcpServer, type McpServerOptions } from './create-mcp-server.ts'
import { MAX_REQUEST_BYTES } from './serve-http.ts'

/**
 * Longest message line accepted, as over HTTP (a whole file can be written in one call). A
 * longer one is answered with an error and skipped; the connection goes on. The SDK's own
 * reader closed the connection, and so ended the server, at any line over 10 MiB.
 */
export const MAX_MESSAGE_BYTES = MAX_REQUEST_BYTES

/**
 * Serves one connection on stdio until the client closes it. Resolves when it ends.
 */
export async function serveStdio(options: McpServerOptions): Promise<void> {
  const server = createMcpServer(options)
  const lines = boundedLines(process.stdin, (bytes) => {
    const reply = {
      jsonrpc: '2.0',
      id: null,
      error: {
        code: -32600,
        message: `Request too large: a message of ${bytes} bytes or more, over the limit of ${MAX_MESSAGE_BYTES} bytes; it was not read`,
      },
    }
    transport.send(reply as unknown as JSONRPCMessage).catch(() => undefined)
  })
  // Only whole lines within the limit reach the SDK's reader, one at a time.
  const transport = new StdioServerTransport(lines, process.stdout, {
    maxBufferSize: MAX_MESSAGE_BYTES + 1,
  })
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

/**
 * `input` passed on a whole line at a time, each at most {@link MAX_MESSAGE_BYTES} bytes; a
 * longer line is dropped as it arrives (never held whole) and reported with its size so far.
 */
function boundedLines(input: NodeJS.ReadStream, tooLarge: (bytes: number) => void): PassThrough {
  const output = new PassThrough()
  let pending: Buffer[] = []
  let pendingBytes = 0
  let skipping = false
  input.on('data', (chunk: Buffer) => {
    let start = 0
    while (start < chunk.length) {
      const newline = chunk.indexOf(0x0a, start)
      const end = newline === -1 ? chunk.length : newline
      if (!skipping && pendingBytes + (end - start) > MAX_MESSAGE_BYTES) {
        skipping = true
        tooLarge(pendingBytes + (end - start))
        pending = []
        pendingBytes = 0
      }
      if (!skipping) {
        pending.push(chunk.subarray(start, newline === -1 ? end : end + 1))
        pendingBytes += end - start
      }
      if (newline === -1) break
      if (skipping) skipping = false
      else output.write(pending.length === 1 ? pending[0] : Buffer.concat(pending))
      pending = []
      pendingBytes = 0
      start = newline + 1
    }
  })
  input.once('end', () => output.end())
  input.once('error', (error) => output.destroy(error))
  return output
}
