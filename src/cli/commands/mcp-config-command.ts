/**
 * @module cli/commands/mcp-config-command
 * `eitri mcp-config`: the MCP client configuration for this copy of eitri, with the absolute
 * paths of the Node that runs it and of its entry point filled in, and the options of this
 * command line (state folder, configuration, store, …) kept, so the client's server uses the
 * same state as the command line. With `--http`, the settings of a client that connects to
 * `eitri serve --http`, with the server's bearer token.
 */
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import { namedLocations, readEnvironment } from '../../config/environment.ts'
import { workspaceStateDir } from '../../config/state-dir.ts'
import { httpToken } from '../../mcp/http-token.ts'
import { parseStoreUrl } from '../../store/store-url.ts'
import { DirectoryTree } from '../../workspace/directory-tree.ts'
import type { CliIo } from '../cli-io.ts'
import { EXIT_OK, UsageError } from '../cli-io.ts'
import { parseListenAddress, type CommandLine } from '../parse-command-line.ts'

const ENTRY_POINT = fileURLToPath(new URL('../../../bin/eitri.js', import.meta.url))

/** Prints snippets for Claude Code, Codex and Cursor. */
export function mcpConfigCommand(line: CommandLine, io: CliIo): Promise<number> {
  const workspace = path.resolve(line.workspace ?? process.cwd())
  const serveArgs = ['serve', '--workspace', workspace, ...keptOptions(line)]
  io.stdout(line.http === undefined ? stdioSnippets(serveArgs) : httpSnippets(line, serveArgs))
  return Promise.resolve(EXIT_OK)
}

/**
 * The options of this command line a server needs to work on the same state, made absolute:
 * given as flags, or as environment variables the client's environment will not have.
 */
function keptOptions(line: CommandLine): string[] {
  const named = namedLocations()
  const stateDir = line.stateDir ?? named.stateDir
  const config = line.config ?? named.configPath
  const given = line.store ?? named.store
  const store = given === undefined ? undefined : absoluteStore(given)
  return [
    ...(stateDir === undefined ? [] : ['--state-dir', path.resolve(stateDir)]),
    ...(config === undefined ? [] : ['--config', path.resolve(config)]),
    ...(store === undefined ? [] : ['--store', store]),
    ...(line.tools === undefined ? [] : ['--tools', line.tools.join(',')]),
    ...(line.access === undefined ? [] : ['--access', line.access]),
    ...(line.approval === undefined ? [] : ['--approval', line.approval]),
    ...(line.mode === undefined ? [] : ['--mode', line.mode]),
    ...(line.isolate ? ['--isolate'] : []),
  ]
}

/** A SQLite store's path made absolute: the client starts the server in another folder. */
function absoluteStore(url: string): string {
  const location = parseStoreUrl(url)
  return location.backend === 'sqlite' && location.file !== ':memory:'
    ? `sqlite:${location.file}`
    : url
}

function stdioSnippets(serveArgs: readonly string[]): string {
  const node = process.execPath
  const args = [ENTRY_POINT, ...serveArgs]
  const json = JSON.stringify({ mcpServers: { eitri: { command: node, args } } }, null, 2)
  return `# Claude Code (one command):
claude mcp add eitri -- ${[node, ...args].map(quote).join(' ')}

# Claude Code (.mcp.json) and Cursor (~/.cursor/mcp.json or .cursor/mcp.json):
${json}

# Codex (~/.codex/config.toml):
[mcp_servers.eitri]
command = ${JSON.stringify(node)}
args = [${args.map((arg) => JSON.stringify(arg)).join(', ')}]
`
}

function httpSnippets(line: CommandLine, serveArgs: readonly string[]): string {
  const address = parseListenAddress(line.http ?? '')
  if (address.port === 0)
    throw new UsageError(
      'mcp-config --http needs the port the server listens on, such as --http 8765 (0 picks a new one each time)',
    )
  const host = ['0.0.0.0', '::'].includes(address.host) ? '127.0.0.1' : address.host
  const url = `http://${host.includes(':') ? `[${host}]` : host}:${address.port}/mcp`
  const token = line.noToken
    ? undefined
    : (line.token ?? readEnvironment().token ?? storedToken(line))
  const headers = token === undefined ? undefined : { Authorization: `Bearer ${token}` }
  const serve = [process.execPath, ENTRY_POINT, ...serveArgs, '--http', line.http ?? '']
  if (line.noToken) serve.push('--no-token')
  const json = JSON.stringify(
    { mcpServers: { eitri: { type: 'http', url, ...(headers === undefined ? {} : { headers }) } } },
    null,
    2,
  )
  return `# Start the server (it keeps running; the settings below connect to it):
${serve.map(quote).join(' ')}

# Claude Code (one command):
claude mcp add --transport http eitri ${url}${headers === undefined ? '' : ` --header ${quote(`Authorization: ${headers.Authorization}`)}`}

# Claude Code (.mcp.json) and Cursor (~/.cursor/mcp.json or .cursor/mcp.json):
${json}

# Codex (~/.codex/config.toml):
[mcp_servers.eitri]
url = ${JSON.stringify(url)}${headers === undefined ? '' : `\nhttp_headers = { "Authorization" = ${JSON.stringify(headers.Authorization)} }`}
`
}

/** The token `eitri serve --http` uses for this workspace, made now if it has none yet. */
function storedToken(line: CommandLine): string {
  const root = new DirectoryTree(line.workspace ?? process.cwd()).root
  const stateRoot = path.resolve(line.stateDir ?? readEnvironment().stateDir)
  return httpToken(workspaceStateDir(stateRoot, root)).token
}

function quote(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`
}
