/**
 * @module cli/commands/serve-command
 * `eitri serve`: the MCP server, on stdio or streamable HTTP.
 */
import { enclosingRepositoryNote } from '../enclosing-repository.ts'
import { randomBytes } from 'node:crypto'
import type { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { readEnvironment } from '../../config/environment.ts'
import { createMcpServer, type McpServerOptions } from '../../mcp/create-mcp-server.ts'
import { elicitationApprover } from '../../mcp/elicitation-approver.ts'
import { httpToken } from '../../mcp/http-token.ts'
import { serveHttp } from '../../mcp/serve-http.ts'
import { serveStdio } from '../../mcp/serve-stdio.ts'
import type { Principal } from '../../workspace/fork-owner.ts'
import type { WorkshopSession } from '../../workshop/workshop.ts'
import type { CliIo } from '../cli-io.ts'
import { EXIT_OK, UsageError } from '../cli-io.ts'
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
  const givenToken = line.token ?? readEnvironment().token
  if (line.noToken && givenToken !== undefined)
    throw new UsageError(
      '--no-token contradicts the token in EITRI_TOKEN: unset it, or drop --no-token',
    )
  // A server lives long: it watches main, so a fork costs what changed since the last one.
  // `--isolate` applies to the connections' sessions only: the workshop's own session is unused
  // here, and a fork made for it would stay empty forever.
  await using workshop = await openFromCommandLine(
    { ...line, isolate: false },
    terminalApprover(),
    {
      watch: true,
    },
  )
  const log = (message: string): void => io.stderr(`eitri: ${message}\n`)
  const note = enclosingRepositoryNote(line.workspace ?? '.')
  if (note !== undefined) io.stderr(note)
  // Each connection is a principal of its own, with one session, opened at its first request
  // (its client has said its name by then: the name of its fork under --isolate). Only one
  // stdio connection without --isolate is the person's own client and sees every fork.
  const connection = (): McpServerOptions => {
    let server: Server | undefined
    const principal: Principal = {
      id: `connection-${randomBytes(6).toString('hex')}`,
      seesEveryFork: address === undefined && !line.isolate,
    }
    let opening: Promise<WorkshopSession> | undefined
    const session = (): Promise<WorkshopSession> =>
      (opening ??= workshop
        .openSession({
          approver: elicitationApprover(() => server),
          principal,
          ...(line.isolate
            ? { isolate: true, label: server?.getClientVersion()?.name ?? 'mcp-client' }
            : {}),
        })
        .catch((error: unknown) => {
          opening = undefined // the next request tries again
          throw error
        }))
    return {
      toolset: workshop.toolset,
      context: async (options) => (await session()).context(options),
      onClose: async () => {
        await (await opening?.catch(() => undefined))?.close()
      },
      onCreated: (created: Server) => {
        server = created
      },
      // What a first shell command needs (the command policy's parser, the jail's probe and
      // layer host of the session's line) loads while the client's model thinks, instead of
      // inside that command's call, one part after the other; not at start, where the
      // parser's compile held up the handshake. Nothing runs in the jail, nothing is judged.
      onToolsListed: () => {
        workshop.prepareCommands()
        void opening
          ?.then((session) => session.context().programs?.availability())
          .catch(() => undefined)
      },
      log,
    }
  }
  if (address === undefined) {
    await Promise.race([serveStdio(connection()), aborted(signal)])
    return EXIT_OK
  }
  const stored =
    givenToken === undefined && !line.noToken ? httpToken(workshop.stateDir) : undefined
  const token = givenToken ?? stored?.token
  await using serving = await serveHttp({
    ...address,
    token,
    noToken: line.noToken,
    createServer: () => createMcpServer(connection()),
    log,
  })
  // One write, so that whoever waits for the URL finds the rest with it.
  io.stderr(
    [
      `eitri: MCP server listening on ${serving.url}`,
      ...(token === undefined
        ? [
            'eitri: WARNING: no token (--no-token): every user of this machine, and every program running as one, can use these tools',
          ]
        : [
            `eitri: clients send the header "Authorization: Bearer ${token}"`,
            ...(stored === undefined
              ? []
              : [
                  `eitri: the token is kept in ${stored.file}; \`eitri mcp-config --http ${new URL(serving.url).port}\` prints client settings with it`,
                ]),
          ]),
      '',
    ].join('\n'),
  )
  await aborted(signal)
  return EXIT_OK
}

function aborted(signal: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal.aborted) resolve()
    else signal.addEventListener('abort', () => void resolve(), { once: true })
  })
}
