/**
 * @module cli/main
 * The `eitri` command: parses the command line and runs one command.
 */
import { EitriError } from '../errors/eitri-error.ts'
import { packageInfo } from '../util/package-info.ts'
import { EXIT_FAILURE, EXIT_OK, EXIT_USAGE, UsageError, type CliIo } from './cli-io.ts'
import { approvalsCommand } from './commands/approvals-command.ts'
import { callCommand } from './commands/call-command.ts'
import { demoCommand } from './commands/demo-command.ts'
import { evalCommand } from './commands/eval-command.ts'
import { execCommand } from './commands/exec-command.ts'
import { forkCommand } from './commands/fork-commands.ts'
import { mcpConfigCommand } from './commands/mcp-config-command.ts'
import { replCommand } from './commands/repl-command.ts'
import { serveCommand } from './commands/serve-command.ts'
import { toolsCommand } from './commands/tools-command.ts'
import { parseCommandLine } from './parse-command-line.ts'
import { HELP, USAGE_LINE } from './usage.ts'

/**
 * Runs `eitri` with `argv` (without the node and script paths) and returns the exit status.
 * Never throws: every failure becomes a message on stderr.
 */
export async function main(
  argv: readonly string[],
  io: CliIo,
  signal: AbortSignal,
): Promise<number> {
  try {
    const line = parseCommandLine(argv)
    if (line.version) {
      io.stdout(`${packageInfo.version}\n`)
      return EXIT_OK
    }
    if (line.help || line.command === 'help') {
      io.stdout(HELP)
      return EXIT_OK
    }
    switch (line.command) {
      case 'fork':
      case 'forks':
      case 'diff':
      case 'merge':
      case 'undo-merge':
      case 'discard':
      case 'log':
        return await forkCommand(line, io)
      case 'approvals':
        return await approvalsCommand(line, io)
      case 'demo':
        return await demoCommand(io)
      case 'serve':
        return await serveCommand(line, io, signal)
      case 'exec':
        return await execCommand(line, io, signal)
      case 'mcp-config':
        return await mcpConfigCommand(line, io)
      case 'tools':
        return await toolsCommand(line, io)
      case 'eval':
        return await evalCommand(line, io, signal)
      case 'repl':
        return await replCommand(line, io, signal)
      case 'call':
        return await callCommand(line, io, signal)
      case undefined:
        throw new UsageError('no command given')
      default:
        throw new UsageError(`unknown command '${line.command}'`)
    }
  } catch (error) {
    if (error instanceof UsageError) {
      io.stderr(`eitri: ${error.message}\n${USAGE_LINE}\n`)
      return EXIT_USAGE
    }
    if (EitriError.isInstance(error)) {
      io.stderr(`eitri: ${error.message}\n`)
      return error.code === 'usage' || error.code === 'unknown_tool' ? EXIT_USAGE : EXIT_FAILURE
    }
    io.stderr(`eitri: unexpected failure: ${(error as Error).message ?? String(error)}\n`)
    return EXIT_FAILURE
  }
}
