/**
 * @module cli/cli-io
 * Where a command writes, and the exit status it ends with.
 */
import { EitriError } from '../errors/eitri-error.ts'

/** The streams a command writes to. */
export interface CliIo {
  readonly stdout: (text: string) => void
  readonly stderr: (text: string) => void
  /** Where interactive input comes from (`eitri repl`). @default none: commands read no input */
  readonly stdin?: NodeJS.ReadableStream & { readonly isTTY?: boolean }
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
