/**
 * @module cli/commands/call-command
 * `eitri call TOOL JSON`: one call through the whole contract.
 */
import type { CliIo } from '../cli-io.ts'
import { EXIT_FAILURE, EXIT_OK, UsageError } from '../cli-io.ts'
import type { CommandLine } from '../parse-command-line.ts'
import { openFromCommandLine } from './open-from-command-line.ts'

/** Runs the call; prints the content (errors to stderr) or, with `--json`, the whole result. */
export async function callCommand(
  line: CommandLine,
  io: CliIo,
  signal: AbortSignal,
): Promise<number> {
  const [name, json, ...extra] = line.positionals
  if (name === undefined)
    throw new UsageError(
      'call needs a tool name and a JSON input, such as: eitri call read_file \'{"path":"README.md"}\'',
    )
  if (extra.length > 0)
    throw new UsageError(
      `call takes one JSON input; quote it as one argument (extra: ${extra.join(' ')})`,
    )
  let input: unknown = {}
  if (json !== undefined) {
    try {
      input = JSON.parse(json)
    } catch (error) {
      throw new UsageError(`the input of call is not valid JSON: ${(error as Error).message}`)
    }
  }
  await using workshop = await openFromCommandLine(line)
  let result
  if (line.fork === undefined) {
    result = await workshop.call(name, input, { signal })
  } else {
    // A person at the terminal: may act on any fork, a Run's world included.
    await using session = await workshop.openSession({ trusted: true })
    await session.lines.use(line.fork, { signal })
    result = await workshop.toolset.run({ name, input }, session.context({ signal }))
  }
  if (line.json) io.stdout(`${JSON.stringify(result, null, 2)}\n`)
  else if (result.type === 'success') io.stdout(withNewline(result.content))
  else io.stderr(withNewline(`${result.code}: ${result.content}`))
  return result.type === 'success' ? EXIT_OK : EXIT_FAILURE
}

function withNewline(text: string): string {
  return text.endsWith('\n') || text === '' ? text : `${text}\n`
}
