/**
 * @module cli/cli-io
 * Where a command writes, and the exit status it ends with. What a command writes for a person
 * to read passes through `visibleIo`: a model's text, a tool's result, a program's output or a
 * file name printed raw could carry terminal controls that clear or overwrite what the person
 * reviews before a merge.
 */
import { visibleText } from '../access/visible-text.ts'
import { EitriError } from '../errors/eitri-error.ts'

/** The streams a command writes to. */
export interface CliIo {
  readonly stdout: (text: string) => void
  readonly stderr: (text: string) => void
  /** Where interactive input comes from (`eitri repl`). @default none: commands read no input */
  readonly stdin?: NodeJS.ReadableStream & { readonly isTTY?: boolean }
  /**
   * eitri's own terminal controls on stderr (the live view's cursor moves), written as they are.
   * Only constant sequences of eitri's go here, never text that came from elsewhere.
   * @default stderr
   */
  readonly stderrControls?: (controls: string) => void
  /**
   * Aborts when stdout's reader went away (`eitri exec -- yes | head -1`). Only the commands of
   * `READER_AWARE_COMMANDS` hear of it here; any other is cancelled instead, as SIGPIPE would.
   * @default never
   */
  readonly stdoutClosed?: AbortSignal
}

/**
 * `io` with every control and invisible character of what is written shown as an escape
 * (`visibleText`), on stderr always and on stdout unless `exactStdout`: a command's `--json`
 * output is data for a program, and JSON.stringify already escapes the C0 controls.
 */
export function visibleIo(io: CliIo, options: { readonly exactStdout: boolean }): CliIo {
  return {
    stdout: options.exactStdout ? io.stdout : (text) => io.stdout(visibleText(text)),
    stderr: (text) => io.stderr(visibleText(text)),
    ...(io.stdin === undefined ? {} : { stdin: io.stdin }),
    ...(io.stdoutClosed === undefined ? {} : { stdoutClosed: io.stdoutClosed }),
    stderrControls: io.stderrControls ?? io.stderr,
  }
}

/** A command line that cannot be run as written: exit status 2 with a one-line reason and usage. */
export class UsageError extends EitriError {
  constructor(message: string) {
    super('usage', message)
  }
}

/** Exit statuses. */
export const EXIT_OK = 0
export const EXIT_FAILURE = 1
export const EXIT_USAGE = 2
/** `eitri run`: the Run is waiting (for a person or an input). */
export const EXIT_WAITING = 3
/** Interrupted by Ctrl-C (128 + SIGINT), after cleaning up. */
export const EXIT_INTERRUPTED = 130
