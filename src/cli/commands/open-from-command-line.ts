/**
 * @module cli/commands/open-from-command-line
 * Opens the workshop a command line describes.
 */
import type { Approver } from '../../access/approval.ts'
import { openWorkshop, type Workshop } from '../../workshop/workshop.ts'
import type { CommandLine } from '../parse-command-line.ts'
import { terminalApprover } from '../terminal-approver.ts'

/**
 * The workshop for `--workspace`, `--state-dir`, `--config`, `--store`, `--tools`, `--access`,
 * `--approval` and `--mode`. A person at the terminal approves (the default approver).
 */
export function openFromCommandLine(
  line: CommandLine,
  approver: Approver = terminalApprover(),
  extra: { watch?: boolean } = {},
): Promise<Workshop> {
  return openWorkshop({
    approver,
    ...(extra.watch === true ? { watch: true } : {}),
    ...(line.access === undefined ? {} : { access: line.access }),
    ...(line.approval === undefined ? {} : { approval: line.approval }),
    ...(line.mode === undefined ? {} : { mode: line.mode }),
    ...(line.isolate ? { isolate: true } : {}),
    ...(line.workspace === undefined ? {} : { workspace: line.workspace }),
    ...(line.stateDir === undefined ? {} : { stateDir: line.stateDir }),
    ...(line.config === undefined ? {} : { configPath: line.config }),
    ...(line.store === undefined ? {} : { store: line.store }),
    ...(line.tools === undefined ? {} : { tools: line.tools }),
  })
}
