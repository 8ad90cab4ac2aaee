/**
 * @module cli/main
 * The `eitri` command: parses the command line and runs one command.
 */
import { EitriError } from '../errors/eitri-error.ts'
import { packageInfo } from '../util/package-info.ts'
import { EXIT_FAILURE, EXIT_OK, EXIT_USAGE, UsageError, type CliIo } from './cli-io.ts'
import { parseCommandLine } from './parse-command-line.ts'
import { HELP, USAGE_LINE } from './usage.ts'

// Each command's module is imported when it runs, so `eitri --help` loads almost nothing.

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
      case 'restore':
        return await (await import('./commands/fork-commands.ts')).forkCommand(line, io)
      case 'approvals':
        return await (await import('./commands/approvals-command.ts')).approvalsCommand(line, io)
      case 'run':
        return await (await import('./commands/run-command.ts')).runCommand(line, io, signal)
      case 'bench':
        return await (await import('./commands/bench-command.ts')).benchCommand(line, io, signal)
      case 'runs':
        return await (await import('./commands/runs-command.ts')).runsCommand(line, io, signal)
      case 'demo':
        return await (await import('./commands/demo-command.ts')).demoCommand(io)
      case 'serve':
        return await (await import('./commands/serve-command.ts')).serveCommand(line, io, signal)
      case 'exec':
        return await (await import('./commands/exec-command.ts')).execCommand(line, io, signal)
      case 'mcp-config':
        return await (await import('./commands/mcp-config-command.ts')).mcpConfigCommand(line, io)
      case 'tools':
        return await (await import('./commands/tools-command.ts')).toolsCommand(line, io)
      case 'eval':
        return await (await import('./commands/eval-command.ts')).evalCommand(line, io, signal)
      case 'repl':
        return await (await import('./commands/repl-command.ts')).replCommand(line, io, signal)
      case 'call':
        return await (await import('./commands/call-command.ts')).callCommand(line, io, signal)
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
