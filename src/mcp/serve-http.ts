/**
 * @module mcp/serve-http
 * The MCP server over streamable HTTP at `/mcp`: loopback by default, the SDK's Host check
 * against DNS rebinding, an Origin check, and a bearer token on every request, on loopback
 * too (any local user can reach 127.0.0.1), unless the caller opts out on loopback knowingly.
 */
import { createHash, randomUUID, timingSafeEqual } from 'node:crypto'
import type { Server as HttpServer } from 'node:http'
import type { AddressInfo } from 'node:net'
import type { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { hostHeaderValidation } from '@modelcontextprotocol/sdk/server/middleware/hostHeaderValidation.js'
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js'
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js'
import express, { type NextFunction, type Request, type Response } from 'express'
import { EitriError } from '../errors/eitri-error.ts'
import { inputExcerpt } from '../errors/input-excerpt.ts'
import { MAX_REQUEST_BYTES, tooLargeText } from './message-limit.ts'

/** Where and how to listen. */
export interface HttpServeOptions {
  /** @default '127.0.0.1' */
  readonly host?: string
  /** 0 picks a free port. */
  readonly port: number
  /** The bearer token every request must carry. Required unless `noToken` on loopback. */
  readonly token?: string | undefined
  /**
   * Serve without a token (`eitri serve --no-token`): every local user, and every program
   * running as one, can then use the tools. Refused beyond loopback. @default false
   */
  readonly noToken?: boolean
  /** Makes the server of one new MCP session. */
  readonly createServer: () => Server | Promise<Server>
  readonly log?: (message: string) => void
}

/** A listening HTTP server. */
export interface HttpServing extends AsyncDisposable {
  /** The endpoint, such as `http://127.0.0.1:4242/mcp`. */
  readonly url: string
  close(): Promise<void>
}

export { MAX_REQUEST_BYTES }

const LOOPBACK_HOSTS = new Set(['127.0.0.1', 'localhost', '::1', '[::1]'])

/** True when `host` binds to the loopback interface only. */
export function isLoopback(host: string): boolean {
  return LOOPBACK_HOSTS.has(host) || /^127\.\d+\.\d+\.\d+$/.test(host)
}

/**
 * Starts the HTTP server.
 *
 * @throws EitriError `config_invalid` without a token, unless `noToken` on loopback.
 */
export async function serveHttp(options: HttpServeOptions): Promise<HttpServing> {
  const host = options.host ?? '127.0.0.1'
  const loopback = isLoopback(host)
  const token = options.token === '' ? undefined : options.token
  const hasToken = token !== undefined
  if (!hasToken && !loopback) {
    throw new EitriError(
      'config_invalid',
      `Refusing to serve on ${host} without a bearer token: anyone who can reach it could use your tools. Pass --token or set EITRI_TOKEN, or bind to 127.0.0.1.`,
    )
  }
  if (!hasToken && options.noToken !== true) {
    throw new EitriError(
      'config_invalid',
      `Refusing to serve on ${host} without a bearer token: every local user could use your tools. Give a token, or opt out knowingly (noToken, --no-token).`,
    )
  }
  const sessions = new Map<string, { transport: StreamableHTTPServerTransport; server: Server }>()
  const app = express()
  if (loopback) app.use(hostHeaderValidation(['localhost', '127.0.0.1', '[::1]']))
  // Known once listening, before any request can arrive.
  let port = 0
  app.use(originCheck(loopback, () => port))
  if (token !== undefined) app.use(bearerCheck(token))
  app.use(express.json({ limit: MAX_REQUEST_BYTES }))

  app.all('/mcp', (request: Request, response: Response) => {
    void handle(request, response).catch((error: unknown) => {
      options.log?.(`MCP HTTP request failed: ${(error as Error).message}`)
      if (!response.headersSent) rpcError(response, 500, -32603, 'Internal error')
    })
  })
  app.use((_request: Request, response: Response) =>
    rpcError(response, 404, -32601, 'Not found: the MCP endpoint is /mcp'),
  )
  app.use(
    (
      error: Error & { status?: number; type?: string },
      _request: Request,
      response: Response,
      _next: NextFunction,
    ) => {
      if (error.type === 'entity.parse.failed')
        return rpcError(response, 400, -32700, 'Parse error: the body is not valid JSON')
      if (error.type === 'entity.too.large')
        return rpcError(response, 413, -32600, tooLargeText(undefined))
      return rpcError(response, error.status ?? 400, -32600, `Invalid request: ${error.message}`)
    },
  )

  async function handle(request: Request, response: Response): Promise<void> {
    const sessionId = request.header('mcp-session-id')
    const existing = sessionId === undefined ? undefined : sessions.get(sessionId)
    if (existing !== undefined) {
      await existing.transport.handleRequest(request, response, request.body)
      return
    }
    if (sessionId !== undefined)
      return rpcError(
        response,
        404,
        -32001,
        'Session not found: start a new session with an initialize request',
      )
    if (request.method !== 'POST' || !isInitializeRequest(request.body)) {
      return rpcError(
        response,
        400,
        -32000,
        'Bad request: no session; send an initialize request first',
      )
    }
    const server = await options.createServer()
    const transport: StreamableHTTPServerTransport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => void sessions.set(id, { transport, server }),
    })
    transport.onclose = () => {
      if (transport.sessionId !== undefined) sessions.delete(transport.sessionId)
      void server.close()
    }
    await server.connect(transport)
    await transport.handleRequest(request, response, request.body)
  }

  const httpServer = await listen(app, options.port, host)
  const address = httpServer.address() as AddressInfo
  port = address.port
  const urlHost = address.family === 'IPv6' ? `[${address.address}]` : address.address
  let closing: Promise<void> | undefined
  const close = (): Promise<void> => {
    closing ??= (async () => {
      for (const { transport, server } of sessions.values()) {
        await transport.close()
        await server.close()
      }
      sessions.clear()
      httpServer.closeAllConnections()
      await new Promise<void>((resolve) => httpServer.close(() => resolve()))
    })()
    return closing
  }
  return { url: `http://${urlHost}:${address.port}/mcp`, close, [Symbol.asyncDispose]: close }
}

function listen(app: express.Express, port: number, host: string): Promise<HttpServer> {
  return new Promise((resolve, reject) => {
    const server = app.listen(port, host)
    server.once('listening', () => resolve(server))
    server.once('error', reject)
  })
}

/**
 * A browser page must not drive a local server: its Origin gives it away. Only the server's own
 * origin (`http://` a loopback name and this port) is let in: a page of another local server
 * (another port) is as foreign as another site, and with `noToken` nothing else would stop it.
 * Programs that are not browsers send no Origin.
 */
function originCheck(loopback: boolean, port: () => number) {
  return (request: Request, response: Response, next: NextFunction): void => {
    const origin = request.header('origin')
    if (origin === undefined || !loopback) return next()
    let url: URL
    try {
      url = new URL(origin)
    } catch {
      return rpcError(response, 403, -32000, `Invalid Origin header: ${inputExcerpt(origin)}`)
    }
    if (
      url.protocol !== 'http:' ||
      !LOOPBACK_HOSTS.has(url.hostname) ||
      Number(url.port === '' ? 80 : url.port) !== port()
    )
      return rpcError(
        response,
        403,
        -32000,
        `Origin not allowed: ${inputExcerpt(origin)} (only this server's own, http://localhost:${port()}, is)`,
      )
    next()
  }
}

function bearerCheck(token: string) {
  const expected = digest(token)
  return (request: Request, response: Response, next: NextFunction): void => {
    const header = request.header('authorization') ?? ''
    const match = /^Bearer (.+)$/i.exec(header)
    if (match?.[1] !== undefined && timingSafeEqual(digest(match[1]), expected)) return next()
    response.setHeader('WWW-Authenticate', 'Bearer realm="eitri"')
    rpcError(response, 401, -32001, 'Unauthorized: send the token as "Authorization: Bearer TOKEN"')
  }
}

function digest(text: string): Buffer {
  return createHash('sha256').update(text).digest()
}

function rpcError(response: Response, status: number, code: number, message: string): void {
  response.status(status).json({ jsonrpc: '2.0', error: { code, message }, id: null })
}
