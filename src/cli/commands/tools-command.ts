/**
 * @module cli/commands/tools-command
 * `eitri tools [--json]`: what the toolset offers.
 */
import type { CliIo } from '../cli-io.ts'
import { EXIT_OK } from '../cli-io.ts'
import type { CommandLine } from '../parse-command-line.ts'
import { openFromCommandLine } from './open-from-command-line.ts'

/** Prints the offered tools: a line each, or with `--json` their names, descriptions and schemas. */
export async function toolsCommand(line: CommandLine, io: CliIo): Promise<number> {
  await using workshop = await openFromCommandLine(line)
  const offered = workshop.toolset.offered()
  if (line.json) {
    io.stdout(`${JSON.stringify(offered, null, 2)}\n`)
    return EXIT_OK
  }
  const width = Math.max(...offered.map((tool) => tool.name.length), 0)
  for (const tool of offered)
    io.stdout(`${tool.name.padEnd(width)}  ${firstSentence(tool.description)}\n`)
  return EXIT_OK
}

function firstSentence(text: string): string {
  const end = text.search(/\.(\s|$)/)
  return end === -1 ? text : text.slice(0, end + 1)
}
