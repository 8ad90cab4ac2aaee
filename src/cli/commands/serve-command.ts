/**
 * @module cli/commands/serve-command
 * `eitri serve`: the MCP server, on stdio or streamable HTTP.
 */
import { readEnvironment } from '../../config/environment.ts'
import type { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { createMcpServer } from '../../mcp/create-mcp-server.ts'
import { elicitationApprover } from '../../mcp/elicitation-approver.ts'
import { serveHttp } from '../../mcp/serve-http.ts'
import { serveStdio } from '../../mcp/serve-stdio.ts'
import type { CliIo } from '../cli-io.ts'
import { EXIT_OK } from '../cli-io.ts'
import { parseListenAddress, type CommandLine } from '../parse-command-line.ts'
import { terminalApprover } from '../terminal-approver.ts'
import { openFromCommandLine } from './open-from-command-line.ts'

/** Serves until stdin closes (stdio) or `signal` aborts (both). */
export async function serveCommand(
  line: CommandLine,
  io: CliIo,
  signal: AbortSignal,
): Promise<number> {
  const address = line.http === undefined ? undefined : parseListenAddress(line.http)
  // A server lives long: it watches main, so a fork costs what changed since the last one.
  await using workshop = await openFromCommandLine(line, terminalApprover(), { watch: true })
  const log = (message: string): void => io.stderr(`eitri: ${message}\n`)
  // Each connection has its own session, and its client's person approves (elicitation).
  const connection = async () => {
    let server: Server | undefined
    const session = await workshop.openSession({ approver: elicitationApprover(() => server) })
    return {
      toolset: workshop.toolset,
      context: session.context,
      onClose: () => session.close(),
      onCreated: (created: Server) => {
        server = created
      },
      log,
    }
  }
  if (address === undefined) {
    await Promise.race([serveStdio(await connection()), aborted(signal)])
    return EXIT_OK
  }
  await using serving = await serveHttp({
    ...address,
    token: line.token ?? readEnvironment().token,
    createServer: async () => createMcpServer(await connection()),
    log,
  })
  io.stderr(`eitri: MCP server listening on ${serving.url}\n`)
  await aborted(signal)
  return EXIT_OK
}

function aborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve()
    else signal.addEventListener('abort', () => resolve(), { once: true })
  })
}
