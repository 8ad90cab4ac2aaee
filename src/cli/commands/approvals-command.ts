/**
 * @module cli/commands/approvals-command
 * `eitri approvals [--json]`: every recorded decision on an action that needed a person.
 */
import type { CliIo } from '../cli-io.ts'
import { EXIT_OK } from '../cli-io.ts'
import type { CommandLine } from '../parse-command-line.ts'
import { openFromCommandLine } from './open-from-command-line.ts'

/** Lists the workspace's approval decisions, oldest first. */
export async function approvalsCommand(line: CommandLine, io: CliIo): Promise<number> {
  await using workshop = await openFromCommandLine(line)
  const records = await workshop.approvals.list()
  if (line.json) {
    io.stdout(`${JSON.stringify(records, null, 2)}\n`)
    return EXIT_OK
  }
  if (records.length === 0) io.stdout('No approval decisions recorded for this workspace.\n')
  for (const record of records) {
    io.stdout(
      `${record.time}  ${record.decision.padEnd(20)}  ${record.tool.padEnd(14)}  by ${record.by}: ${record.summary}${record.dangerous ? '  [DANGEROUS]' : ''}\n`,
    )
  }
  return EXIT_OK
}
