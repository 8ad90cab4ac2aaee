/**
 * @module confine/child/child-report
 * Turns how a child runner ended into an executor's report, the same way for the process and
 * the jail executors.
 */
import type { ReadOutput } from './envelope-reader.ts'
import type { ExecutorReport } from '../executors/executor.ts'

/** Characters of the child's stderr quoted when it died without an answer. */
const STDERR_TAIL_CHARS = 2000

/** How a child runner ended. */
export interface ChildEnd {
  readonly output: ReadOutput
  readonly stderr: string
  readonly exitCode: number | null
  readonly signal: string | null
  /** Why the parent stopped it, if it did. */
  readonly stoppedFor?: 'timeout' | 'cancellation' | 'output' | undefined
  /** Set when the child could not be started at all. */
  readonly spawnError?: string | undefined
  readonly timeoutMs: number
  readonly maxEnvelopeBytes: number
}

/** The report of a child that ended as `end` and wrote `files`. */
export function childReport(end: ChildEnd, files: Record<string, string>): ExecutorReport {
  const { output } = end
  const failed = (error: string, status: 'error' | 'timeout' = 'error'): ExecutorReport => ({
    stdout: output.stdout,
    result: undefined,
    files,
    status,
    error,
  })
  if (end.spawnError !== undefined)
    return failed(`the child process could not start: ${end.spawnError}`)
  if (end.stoppedFor === 'timeout') return failed(`stopped after ${end.timeoutMs} ms`, 'timeout')
  if (end.stoppedFor === 'cancellation') return failed('cancelled')
  if (end.stoppedFor === 'output' || output.envelopeTooLarge) {
    return failed(
      `its result was larger than ${end.maxEnvelopeBytes} bytes as JSON; return less (a summary, or write it to a file in tempdir mode)`,
    )
  }
  const { envelope } = output
  if (envelope === undefined) {
    const how =
      end.exitCode === null ? `by signal ${end.signal ?? 'unknown'}` : `with code ${end.exitCode}`
    const stderr = end.stderr.trim().slice(-STDERR_TAIL_CHARS)
    return failed(
      `the child process ended ${how} without a result${stderr === '' ? '' : `: ${stderr}`}`,
    )
  }
  if ('error' in envelope) return failed(envelope.error)
  return { stdout: output.stdout, result: envelope.result, files, status: 'ok' }
}
