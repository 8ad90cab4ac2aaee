/**
 * @module cli/main
 * The `eitri` command: parses the command line and runs one command.
 */
import { EitriError } from '../errors/eitri-error.ts'
import { packageInfo } from '../util/package-info.ts'
import { EXIT_FAILURE, EXIT_OK, EXIT_USAGE, UsageError, visibleIo, type CliIo } from './cli-io.ts'
import { commandNamed, JSON_COMMANDS, READER_AWARE_COMMANDS } from './command-table.ts'
import { parseCommandLine } from './parse-command-line.ts'
import { HELP, USAGE_LINE } from './usage.ts'

/**
 * Runs `eitri` with `argv` (without the node and script paths) and returns the exit status.
 * Never throws: every failure becomes a message on stderr. Everything written for a person
 * shows its control and invisible characters as escapes (`visibleIo`); only a command's
 * `--json` output on stdout is written exactly.
 */
export async function main(
  argv: readonly string[],
  given: CliIo,
  signal: AbortSignal,
): Promise<number> {
  let io = visibleIo(given, { exactStdout: false })
  try {
    const line = parseCommandLine(argv)
    if (line.json && line.command !== undefined && JSON_COMMANDS.has(line.command))
      io = visibleIo(given, { exactStdout: true })
    if (line.version) {
      io.stdout(`${packageInfo.version}\n`)
      return EXIT_OK
    }
    if (line.help || line.command === 'help') {
      io.stdout(HELP)
      return EXIT_OK
    }
    if (line.command === undefined) throw new UsageError('no command given')
    const run = commandNamed(line.command)
    if (run === undefined) throw new UsageError(`unknown command '${line.command}'`)
    // A reader that went away cancels the command, unless it handles that itself.
    const stdoutClosed = given.stdoutClosed
    const cancel =
      stdoutClosed === undefined || READER_AWARE_COMMANDS.has(line.command)
        ? signal
        : AbortSignal.any([signal, stdoutClosed])
    return await run(line, io, cancel)
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
