/**
 * @module cli/commands/eval-command
 * `eitri eval CODE`: one js_eval in a fresh session, through the whole tool contract; prints
 * the output and the value, exit status 1 when the code failed.
 */
import type { CliIo } from '../cli-io.ts'
import { EXIT_FAILURE, EXIT_OK, UsageError } from '../cli-io.ts'
import type { CommandLine } from '../parse-command-line.ts'
import { openFromCommandLine } from './open-from-command-line.ts'

/** Runs the code; prints the content (errors to stderr) or, with `--json`, the whole result. */
export async function evalCommand(
  line: CommandLine,
  io: CliIo,
  signal: AbortSignal,
): Promise<number> {
  const [code, ...extra] = line.positionals
  if (code === undefined || code === '') {
    throw new UsageError("eval needs code, such as: eitri eval '(await fs.list()).length'")
  }
  if (extra.length > 0) {
    throw new UsageError(
      `eval takes the code as one argument; quote it (extra: ${extra.join(' ')})`,
    )
  }
  await using workshop = await openFromCommandLine(line)
  const result = await workshop.call('js_eval', { code }, { signal })
  if (line.json) io.stdout(`${JSON.stringify(result, null, 2)}\n`)
  else if (result.type === 'success') io.stdout(withNewline(result.content))
  else io.stderr(withNewline(`${result.code}: ${result.content}`))
  return result.type === 'success' ? EXIT_OK : EXIT_FAILURE
}

/** `text` ending with one newline. */
export function withNewline(text: string): string {
  return text.endsWith('\n') || text === '' ? text : `${text}\n`
}
