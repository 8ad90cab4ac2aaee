/**
 * @module cli/commands/open-from-command-line
 * Opens the workshop a command line describes.
 */
import { openWorkshop, type Workshop } from '../../workshop/workshop.ts'
import type { CommandLine } from '../parse-command-line.ts'

/** The workshop for `--workspace`, `--state-dir`, `--config` and `--tools`. */
export function openFromCommandLine(line: CommandLine): Promise<Workshop> {
  return openWorkshop({
    ...(line.workspace === undefined ? {} : { workspace: line.workspace }),
    ...(line.stateDir === undefined ? {} : { stateDir: line.stateDir }),
    ...(line.config === undefined ? {} : { configPath: line.config }),
    ...(line.tools === undefined ? {} : { tools: line.tools }),
  })
}
