/**
 * @module cli/command-table
 * Every command `eitri` accepts, each with the module that runs it. The usage line is derived
 * from this table, so a command added here is also listed there.
 */
import type { CliIo } from './cli-io.ts'
import type { CommandLine } from './parse-command-line.ts'

/** Runs one command and returns its exit status. */
export type CommandRunner = (line: CommandLine, io: CliIo, signal: AbortSignal) => Promise<number>

// Each command's module is imported when it runs, so `eitri --help` loads almost nothing.
const forkCommand: CommandRunner = async (line, io) =>
  (await import('./commands/fork-commands.ts')).forkCommand(line, io)

/** The commands, in the order the usage line lists them. */
export const COMMANDS: Readonly<Record<string, CommandRunner>> = {
  demo: async (_line, io) => (await import('./commands/demo-command.ts')).demoCommand(io),
  serve: async (line, io, signal) =>
    (await import('./commands/serve-command.ts')).serveCommand(line, io, signal),
  tools: async (line, io) => (await import('./commands/tools-command.ts')).toolsCommand(line, io),
  call: async (line, io, signal) =>
    (await import('./commands/call-command.ts')).callCommand(line, io, signal),
  eval: async (line, io, signal) =>
    (await import('./commands/eval-command.ts')).evalCommand(line, io, signal),
  repl: async (line, io, signal) =>
    (await import('./commands/repl-command.ts')).replCommand(line, io, signal),
  exec: async (line, io, signal) =>
    (await import('./commands/exec-command.ts')).execCommand(line, io, signal),
  run: async (line, io, signal) =>
    (await import('./commands/run-command.ts')).runCommand(line, io, signal),
  runs: async (line, io, signal) =>
    (await import('./commands/runs-command.ts')).runsCommand(line, io, signal),
  bench: async (line, io, signal) =>
    (await import('./commands/bench-command.ts')).benchCommand(line, io, signal),
  approvals: async (line, io) =>
    (await import('./commands/approvals-command.ts')).approvalsCommand(line, io),
  'mcp-config': async (line, io) =>
    (await import('./commands/mcp-config-command.ts')).mcpConfigCommand(line, io),
  fork: forkCommand,
  forks: forkCommand,
  log: forkCommand,
  restore: forkCommand,
  diff: forkCommand,
  merge: forkCommand,
  'undo-merge': forkCommand,
  discard: forkCommand,
}

/** The command run as `name`, if `eitri` has one by that name. */
export function commandNamed(name: string): CommandRunner | undefined {
  return Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined
}

/**
 * The commands whose `--json` output on stdout is data, written exactly; every other output is
 * for a person and shows control characters as escapes. A command not listed here that takes
 * `--json` has its output escaped too, which fails safe.
 */
export const JSON_COMMANDS: ReadonlySet<string> = new Set([
  'tools',
  'call',
  'eval',
  'run',
  'runs',
  'bench',
  'approvals',
  'fork',
  'forks',
  'log',
  'restore',
  'diff',
  'merge',
])

/**
 * Commands that handle stdout's reader going away themselves (`CliIo.stdoutClosed`): `exec`
 * closes its command's stdout so the command ends as in a shell's pipeline, by SIGPIPE at its
 * next write. Every other command is cancelled then.
 */
export const READER_AWARE_COMMANDS: ReadonlySet<string> = new Set(['exec'])
