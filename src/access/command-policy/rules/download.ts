/**
 * @module access/command-policy/rules/download
 * A download run as code is never allowed: `curl … | sh`, `wget -O- … | sudo bash`,
 * `bash <(curl …)`, `sh -c "$(curl …)"`, `eval "$(curl …)"`, `. <(curl …)`. Downloading a file
 * and reading it is fine; running it unseen is not.
 */
import type { CommandFinding } from '../command-judgement.ts'
import { DOWNLOADERS, INTERPRETERS, SHELLS, STREAM_FILES } from '../programs.ts'
import { resolveCommand, type ResolvedCommand } from '../resolve-command.ts'
import { readShellInvocation } from '../shell-invocation.ts'
import type { ShellWord, SimpleCommand } from '../shell-syntax.ts'
import type { CommandRuleCheck } from './rule.ts'

const EVALUATORS = new Set(['eval', 'source', '.'])

export const checkDownload: CommandRuleCheck = (command) => {
  const inline = INTERPRETERS[command.name]
  if (inline === undefined && !EVALUATORS.has(command.name)) return []
  if (inline !== undefined && readsProgramFromStdin(command, inline)) {
    const stdin = command.source.stdin
    if (stdin.type === 'pipe' && stdin.upstream.some(isDownloader))
      return [denied(`${command.name} runs what a download before it in the pipeline prints`)]
    const fed =
      stdin.type === 'document' ? stdin.body : stdin.type === 'file' ? stdin.target : undefined
    if (fed?.substitutions.some(isDownloader) === true)
      return [denied(`${command.name} runs the download fed to it in ${fed.text}`)]
  }
  const code = codeWords(command, inline).find((word) => word.substitutions.some(isDownloader))
  return code === undefined ? [] : [denied(`${command.name} runs the download in ${code.text}`)]
}

/** True for a command that fetches from the network (`curl`, `sudo wget`, …). */
export function isDownloader(command: SimpleCommand): boolean {
  const resolution = resolveCommand(command)
  return resolution.type === 'resolved' && DOWNLOADERS.has(resolution.command.name)
}

/** Whether an interpreter takes its program from standard input. */
export function readsProgramFromStdin(
  command: ResolvedCommand,
  inline: ReadonlySet<string>,
): boolean {
  if (SHELLS.has(command.name)) {
    const invocation = readShellInvocation(command.args)
    if (invocation.type === 'file') return STREAM_FILES.test(invocation.file.value ?? '')
    return invocation.type === 'stdin'
  }
  const values = command.args.map((word) => word.value ?? '')
  if (values.some((value) => inline.has(value))) return false
  const operands = values.filter((value) => !value.startsWith('-') || value === '-')
  return operands.length === 0 || STREAM_FILES.test(operands[0] ?? '')
}

/** The words that hold the code an interpreter or `eval`/`source` runs. */
function codeWords(command: ResolvedCommand, inline: ReadonlySet<string> | undefined): ShellWord[] {
  if (inline === undefined) return [...command.args]
  if (SHELLS.has(command.name)) {
    const invocation = readShellInvocation(command.args)
    if (invocation.type === 'string') return [invocation.script]
    if (invocation.type === 'file') return [invocation.file]
    return invocation.type === 'unclear' ? [invocation.word] : []
  }
  return command.args.filter(
    (word, index) => word.text.startsWith('<(') || inline.has(command.args[index - 1]?.value ?? ''),
  )
}

function denied(what: string): CommandFinding {
  return {
    verdict: 'deny',
    rule: 'download-to-shell',
    reason: `${what}: running downloaded code unseen is never allowed; download the file, read it, then run it if it is safe`,
  }
}
