/**
 * @module jail/unconfined-run
 * A program run OUTSIDE the jail: only for a call a person approved at full access, and
 * recorded as such by the access layer. Still bounded in time and output, and killed with
 * its whole process group at the deadline.
 */
import { DEFAULT_MAX_OUTPUT_CHARS } from '../util/bounded-output.ts'
import { runBounded } from '../util/bounded-spawn.ts'
import type { JailResult } from './jail.ts'

/** What an unconfined run needs. */
export interface UnconfinedRequest {
  readonly command: readonly string[]
  /** The host folder to run in (the workspace). */
  readonly cwd: string
  readonly environment: Readonly<Record<string, string | undefined>>
  readonly timeoutMs: number
  readonly maxOutputChars?: number | undefined
  readonly signal?: AbortSignal | undefined
}

/** Runs the program on the host; resolves when it and its output have ended. */
export async function runUnconfined(request: UnconfinedRequest): Promise<JailResult> {
  const run = await runBounded(request.command[0] ?? '/bin/true', request.command.slice(1), {
    cwd: request.cwd,
    env: request.environment,
    noStdin: true,
    timeoutMs: request.timeoutMs,
    signal: request.signal,
    maxOutputChars: request.maxOutputChars ?? DEFAULT_MAX_OUTPUT_CHARS,
  })
  const { spawnError } = run
  return {
    // A program that could not start answers as a shell would: 127.
    exitCode: spawnError === undefined ? run.exitCode : 127,
    signal: run.signal,
    timedOut: run.timedOut,
    cancelled: run.cancelled,
    durationMs: run.durationMs,
    stdout: run.stdout,
    stderr: spawnError === undefined ? run.stderr : `${run.stderr}${spawnError}\n`,
    truncated: run.truncated,
    ...(spawnError === undefined ? {} : { spawnError }),
  }
}
