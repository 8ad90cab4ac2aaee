/**
 * @module cli/commands/mcp-config-command
 * `eitri mcp-config`: the MCP client configuration for this copy of eitri, with the absolute
 * paths of the Node that runs it and of its entry point filled in.
 */
import path from 'node:path'
import { fileURLToPath } from 'node:url'
import type { CliIo } from '../cli-io.ts'
import { EXIT_OK } from '../cli-io.ts'
import type { CommandLine } from '../parse-command-line.ts'

const ENTRY_POINT = fileURLToPath(new URL('../../../bin/eitri.js', import.meta.url))

/** Prints snippets for Claude Code, Codex and Cursor. */
export function mcpConfigCommand(line: CommandLine, io: CliIo): Promise<number> {
  const node = process.execPath
  const workspace = path.resolve(line.workspace ?? process.cwd())
  const args = [ENTRY_POINT, 'serve', '--workspace', workspace]
  const json = JSON.stringify({ mcpServers: { eitri: { command: node, args } } }, null, 2)
  io.stdout(`# Claude Code (one command):
claude mcp add eitri -- ${[node, ...args].map(quote).join(' ')}

# Claude Code (.mcp.json) and Cursor (~/.cursor/mcp.json or .cursor/mcp.json):
${json}

# Codex (~/.codex/config.toml):
[mcp_servers.eitri]
command = ${JSON.stringify(node)}
args = [${args.map((arg) => JSON.stringify(arg)).join(', ')}]
`)
  return Promise.resolve(EXIT_OK)
}

function quote(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`
}
