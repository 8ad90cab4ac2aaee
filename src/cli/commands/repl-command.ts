/**
 * @module cli/commands/repl-command
 * `eitri repl`: a terminal REPL over one js_eval session. Definitions persist from one entry
 * to the next; an entry that is not complete yet (an open brace, an unfinished expression)
 * continues on the next line. Ctrl-C stops the running eval, or clears the entry; Ctrl-D or
 * `.exit` leaves.
 */
import readline from 'node:readline'
import { parse } from 'acorn'
import type { CliIo } from '../cli-io.ts'
import { EXIT_OK, UsageError } from '../cli-io.ts'
import type { CommandLine } from '../parse-command-line.ts'
import { withNewline } from './eval-command.ts'
import { openFromCommandLine } from './open-from-command-line.ts'

const PROMPT = 'eitri> '
const CONTINUE = '...... '

/** Reads entries until the input ends; each runs as one js_eval in the same session. */
export async function replCommand(
  line: CommandLine,
  io: CliIo,
  signal: AbortSignal,
): Promise<number> {
  if (line.positionals.length > 0) {
    throw new UsageError(`repl takes no arguments (got ${line.positionals.join(' ')})`)
  }
  const input = io.stdin
  if (input === undefined) throw new UsageError('repl needs an input to read from')
  await using workshop = await openFromCommandLine(line)
  const terminal = input.isTTY === true
  const lines = readline.createInterface({
    input,
    terminal,
    ...(terminal ? { output: process.stdout } : {}),
  })
  let running: AbortController | undefined
  let entry = ''
  const prompt = (): void => {
    if (terminal) {
      lines.setPrompt(entry === '' ? PROMPT : CONTINUE)
      lines.prompt()
    }
  }
  lines.on('SIGINT', () => {
    if (running !== undefined) running.abort()
    else if (entry !== '') {
      entry = ''
      io.stdout('\n')
      prompt()
    } else lines.close()
  })
  const stop = (): void => lines.close()
  signal.addEventListener('abort', stop, { once: true })
  if (terminal) io.stdout('eitri js_eval REPL: definitions persist; .exit or Ctrl-D to leave.\n')
  prompt()
  try {
    for await (const text of lines) {
      entry = entry === '' ? text : `${entry}\n${text}`
      if (entry.trim() === '') {
        entry = ''
        prompt()
        continue
      }
      if (entry.trim() === '.exit') break
      if (!complete(entry)) {
        prompt()
        continue
      }
      const code = entry
      entry = ''
      running = new AbortController()
      const result = await workshop.call(
        'js_eval',
        { code },
        { signal: AbortSignal.any([running.signal, signal]) },
      )
      running = undefined
      if (result.type === 'success') io.stdout(withNewline(result.content))
      else io.stderr(withNewline(`${result.code}: ${result.content}`))
      prompt()
    }
  } finally {
    signal.removeEventListener('abort', stop)
    lines.close()
  }
  return EXIT_OK
}

/** False when the entry's JavaScript ends before it is complete (so the next line continues it). */
function complete(code: string): boolean {
  try {
    parse(code, { ecmaVersion: 'latest', sourceType: 'script', allowAwaitOutsideFunction: true })
    return true
  } catch (error) {
    return (error as { pos?: number }).pos !== code.length
  }
}
