/**
 * @module mcp/serve-stdio
 * The MCP server over standard input and output. Nothing but protocol goes to stdout.
 */
import { PassThrough } from 'node:stream'
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js'
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js'
import { createMcpServer, type McpServerOptions } from './create-mcp-server.ts'
import { CUT_END_BYTES, idOfCutMessage, MAX_REQUEST_BYTES, tooLargeText } from './message-limit.ts'

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
  const lines = boundedLines(process.stdin, (cut) => {
    // Answered to the request that sent it when either end of the line names its id: the
    // client's call fails at once, with what to do, instead of waiting out its own timeout.
    const reply = {
      jsonrpc: '2.0',
      id: idOfCutMessage(cut.head.toString('utf8'), cut.tail.toString('utf8')),
      error: { code: -32600, message: tooLargeText(cut.bytes) },
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

/** A line too long to read: its length and the bytes at either end (for its id). */
interface CutLine {
  readonly bytes: number
  readonly head: Buffer
  readonly tail: Buffer
}

/**
 * `input` passed on a whole line at a time, each at most {@link MAX_MESSAGE_BYTES} bytes; a
 * longer line is dropped as it arrives (never held whole, only its two ends) and reported
 * when it ends, with its size.
 */
function boundedLines(input: NodeJS.ReadStream, tooLarge: (cut: CutLine) => void): PassThrough {
  const output = new PassThrough()
  let pending: Buffer[] = []
  let pendingBytes = 0
  let cut: { bytes: number; head: Buffer; tail: Buffer } | undefined
  input.on('data', (chunk: Buffer) => {
    let start = 0
    while (start < chunk.length) {
      const newline = chunk.indexOf(0x0a, start)
      const end = newline === -1 ? chunk.length : newline
      const piece = chunk.subarray(start, end)
      if (cut === undefined && pendingBytes + piece.length > MAX_MESSAGE_BYTES) {
        cut = { bytes: pendingBytes, head: firstBytes([...pending, piece]), tail: Buffer.alloc(0) }
        pending = []
        pendingBytes = 0
      }
      if (cut === undefined) {
        pending.push(chunk.subarray(start, newline === -1 ? end : end + 1))
        pendingBytes += piece.length
      } else {
        cut.bytes += piece.length
        const joined = Buffer.concat([cut.tail, piece.subarray(-CUT_END_BYTES)])
        cut.tail = Buffer.from(joined.subarray(-CUT_END_BYTES))
      }
      if (newline === -1) break
      if (cut === undefined)
        output.write(pending.length === 1 ? pending[0] : Buffer.concat(pending))
      else tooLarge(cut)
      cut = undefined
      pending = []
      pendingBytes = 0
      start = newline + 1
    }
  })
  input.once('end', () => {
    if (cut !== undefined) tooLarge(cut)
    output.end()
  })
  input.once('error', (error) => output.destroy(error))
  return output
}

/** The first {@link CUT_END_BYTES} bytes of `buffers` joined, copied. */
function firstBytes(buffers: readonly Buffer[]): Buffer {
  const kept: Buffer[] = []
  let length = 0
  for (const buffer of buffers) {
    if (length >= CUT_END_BYTES) break
    kept.push(buffer.subarray(0, CUT_END_BYTES - length))
    length += kept.at(-1)?.length ?? 0
  }
  return Buffer.concat(kept)
}
