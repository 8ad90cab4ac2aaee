/**
 * @module eitri/mcp
 * An MCP server from a toolset, served over stdio or streamable HTTP.
 */
export {
  createMcpServer,
  toCallToolResult,
  type McpServerOptions,
} from '../mcp/create-mcp-server.ts'
export { serveHttp, type HttpServeOptions, type HttpServing } from '../mcp/serve-http.ts'
export { serveStdio } from '../mcp/serve-stdio.ts'
